// Package switchjournal is the record a switch leaves while it runs:
// /var/lib/rke2-proxy-backend/switch.json holds the operator config's
// original bytes and the step the switch (or its rollback) reached, so a
// switch cut at any point is finished or undone from it. It sits beside
// the plan and the bench file, the other records the tool leaves.
package switchjournal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Schema is the journal's format. A reader refuses any other: a
// journal from a newer binary may record steps this one does not know, and
// guessing at them could restore the wrong bytes.
const Schema = 1

// maxSize bounds the journal's read: the config's cap, base64 (4/3),
// and room for the rest.
const maxSize = 2 << 20

// The two directions a journal can be going.
const (
	PhaseSwitch   = "switch"
	PhaseRollback = "rollback"
)

// The step names of each phase, in order (stable: journals record them).
var (
	// sweep-ipvs is a step of migrations off ipvs only (FromProxyMode);
	// a switch finds the recorded step by name among its own steps.
	SwitchSteps   = []string{"clean-target", "write-config", "restart", "wait", "clean-old", "sweep-ipvs", "kubelet-hints", "verify", "rerun-verify-unit"}
	RollbackSteps = []string{"restore-config", "restart", "wait", "clean-abandoned", "verify", "rerun-verify-unit"}
)

// Journal is an unfinished switch: written before each step, removed when
// the switch (or its rollback) is done, so a switch cut at any point (a
// signal, kill -9, a power loss) is finished from this record, never from
// the config as it is then (which may already be the switched one).
type Journal struct {
	Schema int             `json:"schema"`
	From   backend.Backend `json:"from"`
	To     backend.Backend `json:"to"`
	// Phase is PhaseSwitch or PhaseRollback; Step the step of that phase
	// about to run, or running, when this was written.
	Phase string `json:"phase"`
	Step  string `json:"step"`
	// Reason is why the rollback runs.
	Reason string `json:"reason,omitempty"`
	// FromProxyMode is "ipvs" for a migration off ipvs mode (kube-proxy
	// ran ipvs over From's iptables), whose sweep-ipvs step removes what
	// ipvs leaves; "" for a switch between backends of one mode.
	FromProxyMode string `json:"from_proxy_mode,omitempty"`
	// IPVSTranslation is the migration's report: each ipvs-only setting
	// in RKE2's config and what it becomes, as the switch printed it.
	IPVSTranslation []string `json:"ipvs_translation,omitempty"`
	Config          Snapshot `json:"config"`
	// Plan is this boot's plan.json when the switch started (absent in
	// journals written before it was kept). A rollback puts it back with
	// the config: with backend: auto, the plan is what keeps kube-proxy on
	// From across the rollback's restart (auto keeps this boot's plan).
	Plan  []byte `json:"plan,omitempty"`
	Owner Owner  `json:"owner"`
}

// Snapshot is the operator config before the switch, all a rollback needs
// to put it back byte for byte.
type Snapshot struct {
	Path    string `json:"path"`
	Existed bool   `json:"existed"`
	Data    []byte `json:"data,omitempty"`
	Mode    uint32 `json:"mode,omitempty"`
	UID     int    `json:"uid"`
	GID     int    `json:"gid"`
	// Link is the symlink's target as stored, when the config was a link.
	Link string `json:"link,omitempty"`
}

// Owner is the process running the journal's switch: pid, its start time
// in clock ticks since boot (/proc/PID/stat field 22) and the boot, so a
// reused pid, or the same pid after a reboot, is not taken for it.
type Owner struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Boot  string `json:"boot"`
}

// Self is this process as a journal's owner.
func Self() Owner {
	pid := os.Getpid()
	start, _ := procStart(pid)
	return Owner{PID: pid, Start: start, Boot: bootID()}
}

// Alive says whether the owner still runs. The process table is this
// machine's even under --root (the fixture's switch runs here too).
func (o Owner) Alive() bool {
	if o.PID <= 0 || o.Boot != bootID() {
		return false
	}
	start, err := procStart(o.PID)
	return err == nil && start == o.Start
}

func procStart(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// comm, field 2, may hold spaces and parentheses: fields count from
	// the last ")".
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64)
}

func bootID() string {
	data, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(data))
}

// Store keeps the journal.
type Store interface {
	// Read returns nil, nil when there is no journal.
	Read() (*Journal, error)
	Write(*Journal) error
	Remove() error
	Describe() string
}

// File is the journal at hostfs.SwitchJournal under a root.
type File struct {
	Root hostfs.Root
}

func (f File) Describe() string { return hostfs.SwitchJournal }

func (f File) Read() (*Journal, error) {
	data, err := f.Root.ReadFileMax(hostfs.SwitchJournal, maxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the switch journal: %w", err)
	}
	return Parse(data)
}

// Parse decodes a journal, refusing a schema it does not know and a
// record it could not finish from.
func Parse(data []byte) (*Journal, error) {
	var probe struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w (it is not a switch journal this tool wrote: move it aside after checking %s by hand)", hostfs.SwitchJournal, err, hostfs.ConfigFile)
	}
	if probe.Schema == nil || *probe.Schema != Schema {
		got := "none"
		if probe.Schema != nil {
			got = strconv.Itoa(*probe.Schema)
		}
		return nil, fmt.Errorf("%s: schema %s, but this rke2-proxy-backend reads schema %d only: finish the switch with the version that wrote it (switch --resume or --rollback), or check %s by hand and move the journal aside",
			hostfs.SwitchJournal, got, Schema, hostfs.ConfigFile)
	}
	var j Journal
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("%s: %w", hostfs.SwitchJournal, err)
	}
	if err := j.check(); err != nil {
		return nil, fmt.Errorf("%s: %w: check %s by hand and move the journal aside", hostfs.SwitchJournal, err, hostfs.ConfigFile)
	}
	return &j, nil
}

func (j *Journal) check() error {
	for _, b := range []backend.Backend{j.From, j.To} {
		if _, err := backend.Parse(string(b)); err != nil {
			return fmt.Errorf("backend %q: %w", b, err)
		}
	}
	steps := j.steps()
	if steps == nil {
		return fmt.Errorf("phase %q is neither %s nor %s", j.Phase, PhaseSwitch, PhaseRollback)
	}
	if j.StepIndex() < 0 {
		return fmt.Errorf("step %q is not a step of the %s (%s)", j.Step, j.Phase, strings.Join(steps, ", "))
	}
	if j.Config.Path == "" || (!j.Config.Existed && (len(j.Config.Data) > 0 || j.Config.Link != "")) {
		return errors.New("the recorded config is incomplete")
	}
	return nil
}

// Write records j, whole or not at all (temp file, fsync, rename). Only
// the record before the config write (write-config) and the rollback's
// records must survive a power cut as written, and get their directory
// synced too: before write-config the node holds nothing to undo (no
// journal, or one at clean-target, is right), and from it on any earlier
// forward record is a right place to resume or roll back from (every step
// can run again; a rollback starts over from its first step). So a
// forward record that a crash undoes costs at most a step run again, and
// saves a directory sync each (a journal commit on ext4).
func (f File) Write(j *Journal) error {
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	write := f.Root.AdvanceFileAtomic
	if j.Phase != PhaseSwitch || j.Step == SwitchSteps[1] {
		write = f.Root.WriteFileAtomic
	}
	if _, err := write(hostfs.SwitchJournal, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write the switch journal: %w", err)
	}
	return nil
}

func (f File) Remove() error {
	// Durable: a journal that came back after a power cut would resume a
	// switch already reported finished.
	if err := f.Root.RemoveFile(hostfs.SwitchJournal); err != nil {
		return fmt.Errorf("remove the finished switch journal: %w", err)
	}
	return nil
}

// steps are the step names of j's phase (nil for a phase it does not know).
func (j *Journal) steps() []string {
	switch j.Phase {
	case PhaseSwitch:
		return SwitchSteps
	case PhaseRollback:
		return RollbackSteps
	}
	return nil
}

// StepIndex is where j's step is in its phase's steps (-1 when it is not
// one of them; Parse refuses such a journal).
func (j *Journal) StepIndex() int {
	for i, x := range j.steps() {
		if x == j.Step {
			return i
		}
	}
	return -1
}
