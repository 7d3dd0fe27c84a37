package certified

import (
	"fmt"
	"strings"
)

// Machine is what the booted machine has, as the probe read it.
type Machine struct {
	// Release is the running kernel's release ("" unknown).
	Release string
	// Has reports whether a module is loaded, built in or in the running
	// kernel's module tree; nil when the module tree could not be read
	// (then no module is said to be gone).
	Has func(module string) bool
	// NotRunnable maps the backends the machine cannot run to why.
	NotRunnable map[string]string
}

// Differences says, one clause each, where the booted machine differs
// from what the image was certified for: another kernel release, modules
// the image had that are gone, backends certified runnable that are not.
// None when it is the machine the image was certified for.
func (r Record) Differences(m Machine) []string {
	var out []string
	if m.Release != "" && r.Kernel.Release != "" && m.Release != r.Kernel.Release {
		out = append(out, fmt.Sprintf("it boots kernel %s, the image was certified for %s", m.Release, r.Kernel.Release))
	}
	if m.Has != nil {
		var gone []string
		for _, mod := range r.Kernel.Modules {
			if !m.Has(mod) {
				gone = append(gone, mod)
			}
		}
		if len(gone) > 0 {
			out = append(out, fmt.Sprintf("%s, which the certified kernel had, %s not in this kernel", strings.Join(gone, ", "), isAre(len(gone))))
		}
	}
	for _, b := range r.Backends {
		if why, out2 := m.NotRunnable[b.Name]; b.Runnable && out2 {
			out = append(out, fmt.Sprintf("%s, certified runnable, is not: %s", b.Name, why))
		}
	}
	return out
}

// Notice is the one line the generator and detect say when the machine
// differs from its certificate ("" when it does not).
func (r Record) Notice(m Machine) string {
	d := r.Differences(m)
	if len(d) == 0 {
		return ""
	}
	backend := "no backend"
	if r.Backend != "" {
		backend = r.Backend
	}
	return fmt.Sprintf("This machine differs from what its image was certified for (%s: %s, %s): %s. The backend is decided for this machine, not the image; certify the image again for this kernel, or add what is gone.",
		File, r.Verdict, backend, strings.Join(d, "; "))
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
