package events

// ParseCgroup finds the systemd unit or the pod (UID and container) a
// /proc/PID/cgroup file names: the census attributes a network namespace
// to the process it entered it through, as watch attributes a writer.
func ParseCgroup(file string) Origin { return parseCgroup(file) }
