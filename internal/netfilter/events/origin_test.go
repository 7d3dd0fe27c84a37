package events

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const testUID = "0f3c5a4e-8b1d-4c2a-9e7f-123456789abc"

// staticUID is a static pod's UID: the kubelet's hash of its manifest.
const staticUID = "9d5e7e1bd2e8b1c3a0f4e6d8c2b4a6f8"

func TestParseCgroup(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       Origin
	}{
		{"v2 service", "0::/system.slice/rke2-server.service\n", Origin{Unit: "rke2-server.service"}},
		{"v2 session", "0::/user.slice/user-0.slice/session-3.scope\n", Origin{Unit: "session-3.scope"}},
		{"v2 nested in a service", "0::/system.slice/containerd.service/sub\n", Origin{Unit: "containerd.service"}},
		{"hybrid: unified at the root, systemd names it", "1:name=systemd:/system.slice/cron.service\n0::/\n", Origin{Unit: "cron.service"}},
		{"cgroupfs pod", "0::/kubepods/burstable/pod" + testUID + "/4f1e2d\n", Origin{PodUID: testUID, Container: "4f1e2d"}},
		{"systemd-driver pod", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(testUID, "-", "_") + ".slice/cri-containerd-4f1e2d.scope\n",
			Origin{PodUID: testUID, Container: "4f1e2d"}},
		{"guaranteed pod, systemd driver", "0::/kubepods.slice/kubepods-pod" + strings.ReplaceAll(testUID, "-", "_") + ".slice/crio-ab12.scope\n",
			Origin{PodUID: testUID, Container: "ab12"}},
		{"pod without container", "0::/kubepods/besteffort/pod" + testUID + "\n", Origin{PodUID: testUID}},
		{"static pod (kube-proxy), systemd driver", "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + staticUID + ".slice/cri-containerd-9c.scope\n",
			Origin{PodUID: staticUID, Container: "9c"}},
		{"static pod, cgroupfs", "0::/kubepods/burstable/pod" + staticUID + "/9c\n", Origin{PodUID: staticUID, Container: "9c"}},
		{"not a UID", "0::/kubepods/besteffort/podnotauid/x\n", Origin{}},
		{"33 hex digits", "0::/kubepods/besteffort/pod" + staticUID + "a/x\n", Origin{}},
		{"dashed static hash", "0::/kubepods/besteffort/pod" + staticUID[:8] + "-" + staticUID[8:] + "/x\n", Origin{}},
		{"root", "0::/\n", Origin{}},
		{"garbage", "nonsense", Origin{}},
	} {
		if got := parseCgroup(tc.file); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// FuzzParseCgroup: never panics; a pod UID found is a UID, a unit is one
// path element ending in .service or .scope, a container only with a pod.
func FuzzParseCgroup(f *testing.F) {
	f.Add("0::/system.slice/rke2-server.service\n")
	f.Add("0::/kubepods/burstable/pod" + testUID + "/4f1e2d\n")
	f.Add("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(testUID, "-", "_") + ".slice/cri-containerd-4f1e2d.scope\n")
	f.Add("1:name=systemd:/a.scope\n0::/\n")
	f.Fuzz(func(t *testing.T, file string) {
		o := parseCgroup(file)
		if o.PodUID != "" && !isUID(o.PodUID) {
			t.Fatalf("pod UID %q is not a UID", o.PodUID)
		}
		if len(o.PodUID) != 0 && len(o.PodUID) != 36 || strings.Count(o.PodUID, "-") != 4*min(len(o.PodUID), 1) {
			t.Fatalf("pod UID %q: not 36 characters with four dashes", o.PodUID)
		}
		if o.Unit != "" && (o.PodUID != "" || strings.Contains(o.Unit, "/") || !(strings.HasSuffix(o.Unit, ".service") || strings.HasSuffix(o.Unit, ".scope"))) {
			t.Fatalf("unit %q (pod %q): not one .service or .scope element", o.Unit, o.PodUID)
		}
		if o.Container != "" && (o.PodUID == "" || strings.Contains(o.Container, "/")) {
			t.Fatalf("container %q outside a pod %q or spanning elements", o.Container, o.PodUID)
		}
		if o.Exited {
			t.Fatal("a parsed file said exited")
		}
	})
}

// A writer gone by the time its change is read is said to have exited;
// one alive is read from its cgroup file.
func TestOriginOf(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if o, err := originOf(uint32(cmd.Process.Pid)); err != nil || o != (Origin{Exited: true}) {
		t.Errorf("a reaped process: %+v, %v; want exited", o, err)
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	if o, err := originOf(uint32(os.Getpid())); err != nil || o != parseCgroup(string(b)) {
		t.Errorf("this process: %+v, %v; want %+v", o, err, parseCgroup(string(b)))
	}
}

// BenchmarkResolve is the cost a commit adds to watch: one cgroup read for
// a new process (alive or gone), none for the same process again.
func BenchmarkResolve(b *testing.B) {
	self := commit{pid: uint32(os.Getpid()), comm: "events.test"}
	b.Run("new process", func(b *testing.B) {
		for b.Loop() {
			var r resolver
			r.writer(self)
		}
	})
	b.Run("same process again", func(b *testing.B) {
		var r resolver
		for b.Loop() {
			r.writer(self)
		}
	})
	b.Run("exited", func(b *testing.B) {
		for b.Loop() {
			var r resolver
			r.writer(commit{pid: 1 << 30, comm: "nft"})
		}
	})
}
