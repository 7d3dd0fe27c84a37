package hostplan

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/certified"
)

// Certification is the booted machine held against the certificate
// `certify` left in its image (nil when the image has none, or the root is
// an image itself).
type Certification struct {
	File string `json:"file"`
	// Verdict and Kernel are what the image was certified as and for.
	Verdict string `json:"verdict"`
	Kernel  string `json:"kernel"`
	// Differs says where this machine differs, one clause each (empty
	// when it is the machine the image was certified for).
	Differs []string `json:"differs"`
	// Notice is the one line the generator and detect say ("" when
	// nothing differs): the differences, or why the record is unreadable.
	Notice string `json:"notice,omitempty"`
}

// certification compares the booted machine's facts with the image's
// certificate. It reads one small file, and nothing when there is none.
func certification(root hostfs.Root, f facts.Facts) *Certification {
	if f.Image {
		return nil
	}
	r, found, err := certified.Read(root)
	if !found {
		return nil
	}
	if err != nil {
		return &Certification{File: certified.File, Differs: []string{}, Notice: err.Error()}
	}
	m := certified.Machine{Release: f.Kernel.Release, NotRunnable: map[string]string{}}
	if f.Modules.AvailableKnown || f.Modules.BuiltinKnown {
		mods := f.Modules
		m.Has = func(mod string) bool {
			return facts.HasModule(mods.Available, mod) || facts.HasModule(mods.Builtin, mod) || facts.HasModule(mods.Loaded, mod)
		}
	}
	_, not := decide.Runnable(f)
	for b, why := range not {
		m.NotRunnable[string(b)] = why
	}
	c := &Certification{File: certified.File, Verdict: r.Verdict, Kernel: r.Kernel.Release, Differs: r.Differences(m), Notice: r.Notice(m)}
	if c.Differs == nil {
		c.Differs = []string{}
	}
	return c
}
