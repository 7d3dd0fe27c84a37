package generator_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kmod/kmodtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// goldenCase is one fixture host root and how the generator is run on it.
type goldenCase struct {
	name  string
	host  func(*testing.T) *testhost.Host
	env   map[string]string // the generator's environment (SYSTEMD_IN_INITRD)
	flags []string          // global flags before "generate" (--config)
}

const shippedConfig = "../packaging/config.yaml"

func operatorConfig(yaml string) func(*testhost.Host) *testhost.Host {
	return func(h *testhost.Host) *testhost.Host { return h.File("/etc/rke2-proxy-backend/config.yaml", yaml) }
}

func goldenCases() []goldenCase {
	host := func(build func(h *testhost.Host) *testhost.Host) func(*testing.T) *testhost.Host {
		return func(t *testing.T) *testhost.Host { return build(testhost.New(t)) }
	}
	legacyUnit := func(h *testhost.Host) *testhost.Host {
		return h.RKE2Unit("tarball", "server", testhost.UnitLegacy)
	}
	return []goldenCase{
		{name: "tarball_server_debian12", host: host(func(h *testhost.Host) *testhost.Host {
			return h.Debian12().RKE2Unit("tarball", "server")
		})},
		{name: "tarball_server_legacy_unit", host: host(func(h *testhost.Host) *testhost.Host { return legacyUnit(h.Debian12()) })},
		{name: "tarball_agent_ubuntu_docker_legacy", host: host(func(h *testhost.Host) *testhost.Host {
			return h.Ubuntu2204DockerLegacy().RKE2Unit("tarball", "agent")
		})},
		{name: "opt_server_rhel9", host: host(func(h *testhost.Host) *testhost.Host {
			return h.RHEL9().RKE2Unit("opt", "server")
		})},
		{name: "opt_agent_alpine617", host: host(func(h *testhost.Host) *testhost.Host {
			return h.Alpine617().RKE2Unit("opt", "agent")
		})},
		{name: "rpm_server_and_agent_rhel9", host: host(func(h *testhost.Host) *testhost.Host {
			return h.RHEL9().RKE2Unit("rpm", "server").RKE2Unit("rpm", "agent")
		})},
		{name: "rpm_agent_synology", host: host(func(h *testhost.Host) *testhost.Host {
			return h.Synology44().RKE2Unit("rpm", "agent")
		})},
		{name: "backend_iptables_legacy", host: host(func(h *testhost.Host) *testhost.Host {
			return operatorConfig("backend: iptables-legacy\nverify:\n  wait: 90s\n")(h.Debian12().RKE2Unit("tarball", "server"))
		})},
		{name: "backend_iptables_nft", host: host(func(h *testhost.Host) *testhost.Host {
			return operatorConfig("backend: iptables-nft\n")(h.Ubuntu2204DockerLegacy().RKE2Unit("tarball", "server"))
		})},
		{name: "backend_nftables", host: host(func(h *testhost.Host) *testhost.Host {
			return operatorConfig("backend: nftables\n")(h.Debian12().RKE2v134())
		})},
		{name: "backend_nftables_refused_on_synology", host: host(func(h *testhost.Host) *testhost.Host {
			return operatorConfig("backend: nftables\n")(h.Synology44().RKE2Unit("tarball", "server"))
		})},
		{name: "rke2_config_pins_nftables", host: host(func(h *testhost.Host) *testhost.Host {
			return h.Debian12().RKE2v134().PinnedProxyMode("nftables")
		})},
		{name: "disabled_by_config", host: host(func(h *testhost.Host) *testhost.Host {
			return operatorConfig("backend: off\n")(h.Debian12().RKE2Unit("tarball", "server"))
		})},
		{name: "disabled_by_cmdline", host: host(func(h *testhost.Host) *testhost.Host {
			return h.Debian12().RKE2Unit("tarball", "server").Cmdline("root=/dev/sda1 rke2.proxy_backend=off")
		})},
		{name: "disabled_rke2_runs_no_kube_proxy", host: host(func(h *testhost.Host) *testhost.Host {
			return h.Debian12().RKE2Unit("tarball", "server").RKE2Config("config.yaml", "disable-kube-proxy: true\n")
		})},
		{name: "initrd_env", env: map[string]string{"SYSTEMD_IN_INITRD": "1"}, host: host(func(h *testhost.Host) *testhost.Host {
			return h.Debian12().RKE2Unit("tarball", "server")
		})},
		{name: "initrd_release_file", host: host(func(h *testhost.Host) *testhost.Host {
			return h.Debian12().RKE2Unit("tarball", "server").File("/etc/initrd-release", "NAME=initrd\n")
		})},
		{name: "no_rke2_installed", host: host(func(h *testhost.Host) *testhost.Host { return h.Debian12() })},
		{name: "broken_operator_config", host: host(func(h *testhost.Host) *testhost.Host {
			return operatorConfig("backend: modern\n")(h.Debian12().RKE2Unit("tarball", "server"))
		})},
		{name: "broken_operator_config_unknown_key", host: host(func(h *testhost.Host) *testhost.Host {
			return operatorConfig("backend: auto\nkube-proxy-env: [IPTABLES_MODE=nft]\n")(h.Debian12().RKE2Unit("tarball", "server"))
		})},
		{name: "broken_rke2_config", host: host(func(h *testhost.Host) *testhost.Host {
			return h.Debian12().RKE2Unit("tarball", "server").RKE2Config("config.yaml", "kube-proxy-arg: [unclosed\n")
		})},
		{name: "empty_root", host: host(func(h *testhost.Host) *testhost.Host { return h })},
		{name: "shipped_example_config", host: func(t *testing.T) *testhost.Host {
			data, err := os.ReadFile(shippedConfig)
			if err != nil {
				t.Fatalf("the shipped example config: %v", err)
			}
			return operatorConfig(string(data))(testhost.New(t).Debian12().RKE2Unit("rpm", "server"))
		}},
		{name: "config_path_with_metacharacters", flags: []string{"--config", `/etc/my "cfg"/100%$HOME.yaml`},
			host: host(func(h *testhost.Host) *testhost.Host {
				return h.Debian12().RKE2Unit("tarball", "agent").File(`/etc/my "cfg"/100%$HOME.yaml`, "backend: iptables-nft\n")
			})},
	}
}

// runGenerator runs the real command line as systemd would and returns the
// normal output dir and the log with the fixture path replaced by $ROOT.
func runGenerator(t *testing.T, c goldenCase, h *testhost.Host) (string, string) {
	t.Helper()
	for k, v := range c.env {
		t.Setenv(k, v)
	}
	if _, ok := c.env["SYSTEMD_IN_INITRD"]; !ok {
		t.Setenv("SYSTEMD_IN_INITRD", "")
	}
	out := t.TempDir()
	dirs := []string{filepath.Join(out, "normal"), filepath.Join(out, "early"), filepath.Join(out, "late")}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	args := append(append([]string{"/usr/lib/systemd/system-generators/" + cli.GeneratorName, "--root", h.Dir()}, c.flags...), dirs...)
	if code := cli.Main(args, &stdout, &stderr); code != 0 {
		t.Fatalf("generator exited %d: %s", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("generator wrote to stdout: %q", stdout.String())
	}
	for _, d := range dirs[1:] {
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Errorf("generator wrote into %s", d)
		}
	}
	log := strings.ReplaceAll(stderr.String(), h.Dir(), "$ROOT")
	if strings.Contains(log, "panic") {
		t.Errorf("panic in the log:\n%s", log)
	}
	return dirs[0], log
}

// readTree maps every file under dir to its content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if os.IsNotExist(err) && p == dir {
			return filepath.SkipDir
		}
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestGolden(t *testing.T) {
	update := os.Getenv("UPDATE_GOLDEN") == "1"
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			h := c.host(t)
			normal, log := runGenerator(t, c, h)
			golden := filepath.Join("testdata", "golden", c.name)
			got := readTree(t, normal)
			if update {
				if err := os.RemoveAll(golden); err != nil {
					t.Fatal(err)
				}
				for rel, content := range got {
					p := filepath.Join(golden, "normal", filepath.FromSlash(rel))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.MkdirAll(golden, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(golden, "log.txt"), []byte(log), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := readTree(t, filepath.Join(golden, "normal"))
			compareTrees(t, got, want)
			wantLog, err := os.ReadFile(filepath.Join(golden, "log.txt"))
			if err != nil {
				t.Fatalf("%v (UPDATE_GOLDEN=1 writes it)", err)
			}
			if log != string(wantLog) {
				t.Errorf("log:\n%s\nwant:\n%s", log, wantLog)
			}
			// Same input, same bytes: a second run gives the same tree.
			again, _ := runGenerator(t, c, h)
			compareTrees(t, readTree(t, again), got)

			// Then run what systemd would run before RKE2 starts.
			written, applyLog := runApplyFromDropIn(t, h, got)
			if update {
				for rel, content := range written {
					p := filepath.Join(golden, "host", filepath.FromSlash(rel))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if applyLog != "" {
					if err := os.WriteFile(filepath.Join(golden, "apply.log"), []byte(applyLog), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			compareTrees(t, written, readTree(t, filepath.Join(golden, "host")))
			if applyLog != "" {
				wantApply, err := os.ReadFile(filepath.Join(golden, "apply.log"))
				if err != nil {
					t.Fatalf("%v (UPDATE_GOLDEN=1 writes it)", err)
				}
				if applyLog != string(wantApply) {
					t.Errorf("apply log:\n%s\nwant:\n%s", applyLog, wantApply)
				}
			}
		})
	}
}

// applyOutputs are the files apply writes (host paths).
var applyOutputs = []string{"/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", "/run/rke2-proxy-backend/plan.json"}

// runApplyFromDropIn runs the ExecStartPre= of the generated RKE2 drop-in
// (as systemd would, against the fixture root with a fake modprobe) and
// returns the files apply wrote and its log.
func runApplyFromDropIn(t *testing.T, h *testhost.Host, generated map[string]string) (map[string]string, string) {
	t.Helper()
	var execLine string
	for rel, content := range generated {
		if strings.HasPrefix(rel, "rke2-") && !strings.HasPrefix(rel, units.VerifyUnit) {
			for _, line := range strings.Split(content, "\n") {
				if v, ok := strings.CutPrefix(line, "ExecStartPre="); ok {
					execLine = v
				}
			}
		}
	}
	if execLine == "" {
		return map[string]string{}, ""
	}
	// The golden cases' command lines have plain words or one quoted
	// --config; the escaping itself is proven in package units.
	argv := strings.Fields(execLine)
	if i := strings.Index(execLine, ` "--config=`); i >= 0 {
		argv = append(strings.Fields(execLine[:i]), configFromLine(t, execLine[i+1:]))
	}
	if argv[0] != hostfs.Binary {
		t.Fatalf("ExecStartPre runs %s, want %s", argv[0], hostfs.Binary)
	}
	kmodtest.Install(t, h.Dir(), h.Release())
	var stdout, stderr bytes.Buffer
	code := cli.Main(append([]string{"rke2-proxy-backend", "--root", h.Dir()}, argv[1:]...), &stdout, &stderr)
	log := fmt.Sprintf("exit %d\n%s", code, strings.ReplaceAll(stderr.String(), h.Dir(), "$ROOT"))
	written := map[string]string{}
	for _, p := range applyOutputs {
		if data, err := os.ReadFile(h.Root().Path(p)); err == nil {
			written[strings.TrimPrefix(p, "/")] = string(data)
		}
	}
	return written, log
}

// configFromLine undoes ExecLine's quoting of one "--config=..." word.
func configFromLine(t *testing.T, quoted string) string {
	t.Helper()
	s := strings.NewReplacer("%%", "%", "$$", "$").Replace(quoted)
	s = strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)
	return strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(s)
}

func compareTrees(t *testing.T, got, want map[string]string) {
	t.Helper()
	var names []string
	for n := range got {
		names = append(names, n)
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		g, gok := got[n]
		w, wok := want[n]
		switch {
		case !wok:
			t.Errorf("unexpected file %s:\n%s", n, g)
		case !gok:
			t.Errorf("missing file %s", n)
		case g != w:
			t.Errorf("%s:\n%s\nwant:\n%s", n, g, w)
		}
	}
}
