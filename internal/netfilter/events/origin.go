package events

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Origin is where a writer ran, read from /proc/PID/cgroup when its
// change arrived: the systemd unit it belongs to, or the pod and
// container. Exited says the process was gone by then (nft and
// iptables-restore exit right after their commit), so neither is known.
type Origin struct {
	Unit      string `json:"unit,omitempty"`
	PodUID    string `json:"pod_uid,omitempty"`
	Container string `json:"container,omitempty"`
	Exited    bool   `json:"exited,omitempty"`
}

// String is the origin for a journal line.
func (o Origin) String() string {
	switch {
	case o.Exited:
		return "exited"
	case o.PodUID != "" && o.Container != "":
		return "pod " + o.PodUID + " container " + o.Container
	case o.PodUID != "":
		return "pod " + o.PodUID
	case o.Unit != "":
		return "unit " + o.Unit
	}
	return "no unit or pod"
}

// originOf reads the cgroup of pid (a thread id in this pid namespace,
// which is what the kernel names). A pid without /proc entry has exited.
func originOf(pid uint32) (Origin, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH):
		return Origin{Exited: true}, nil
	case err != nil:
		return Origin{}, fmt.Errorf("read the cgroup of the writer %d: %w", pid, err)
	}
	return parseCgroup(string(b)), nil
}

// parseCgroup finds the unit or pod in a /proc/PID/cgroup file. The
// unified hierarchy's line ("0::/path") names it on cgroup v2; on a v1
// or hybrid host the name=systemd line does, so that is the fallback.
func parseCgroup(file string) Origin {
	var unified, systemd string
	for line := range strings.Lines(file) {
		id, rest, ok := strings.Cut(strings.TrimSuffix(line, "\n"), ":")
		if !ok {
			continue
		}
		ctrl, path, ok := strings.Cut(rest, ":")
		switch {
		case !ok:
		case id == "0" && ctrl == "":
			unified = path
		case ctrl == "name=systemd":
			systemd = path
		}
	}
	if unified == "" || unified == "/" {
		unified = systemd
	}
	return parseCgroupPath(unified)
}

// parseCgroupPath reads a cgroup path. A pod is a "pod<UID>" directory
// (cgroupfs driver: /kubepods/burstable/pod<UID>/<container id>) or a
// "kubepods-…-pod<UID with _>.slice" one (systemd driver, with the
// container in "cri-containerd-<id>.scope" below it); anything else is
// the deepest .service or .scope unit on the path.
func parseCgroupPath(path string) Origin {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		uid, ok := podUID(p)
		if !ok {
			continue
		}
		o := Origin{PodUID: uid}
		if i+1 < len(parts) {
			o.Container = containerID(parts[i+1])
		}
		return o
	}
	for i := len(parts) - 1; i >= 0; i-- {
		if p := parts[i]; (strings.HasSuffix(p, ".service") || strings.HasSuffix(p, ".scope")) && !strings.HasPrefix(p, ".") {
			return Origin{Unit: p}
		}
	}
	return Origin{}
}

// podUID finds the pod UID in one path element: "pod<UID>" or
// "kubepods[-class]-pod<UID with _ for ->.slice".
func podUID(p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "pod"):
		p = p[len("pod"):]
	case strings.HasPrefix(p, "kubepods") && strings.HasSuffix(p, ".slice"):
		_, after, ok := strings.Cut(p, "-pod")
		if !ok {
			return "", false
		}
		p = strings.ReplaceAll(strings.TrimSuffix(after, ".slice"), "_", "-")
	default:
		return "", false
	}
	return p, isUID(p)
}

// isUID says whether s is a pod UID as the kubelet names a pod's cgroup:
// an API pod's UID (36 characters, hex digits with dashes at 8, 13, 18 and
// 23) or a static pod's, which the kubelet makes from the manifest's hash
// (32 hex digits, pkg/kubelet/config): RKE2 runs kube-proxy, etcd and the
// control plane as static pods.
func isUID(s string) bool {
	dashed := len(s) == 36
	if !dashed && len(s) != 32 {
		return false
	}
	for i, c := range []byte(s) {
		if dashed && (i == 8 || i == 13 || i == 18 || i == 23) {
			if c != '-' {
				return false
			}
			continue
		}
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c)) {
			return false
		}
	}
	return true
}

// containerID strips the runtime's spelling from a container's cgroup:
// "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope" or
// the bare id (cgroupfs driver).
func containerID(p string) string {
	p = strings.TrimSuffix(p, ".scope")
	for _, prefix := range []string{"cri-containerd-", "crio-", "docker-"} {
		p = strings.TrimPrefix(p, prefix)
	}
	return p
}
