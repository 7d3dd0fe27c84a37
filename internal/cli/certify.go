package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/certify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/certified"
)

func newCertifyCommand(g *globals) *cobra.Command {
	var kernelRelease string
	var noRecord bool
	cmd := flagsOnly(spec{"certify", "Judge a node image before it boots: which backends it can run, what it lacks, and record the verdict in it", "certify", printsJSON}, func(cmd *cobra.Command) error {
		if why := facts.CheckRelease(kernelRelease); kernelRelease != "" && why != "" {
			return usageError(fmt.Errorf("--kernel-release %q: %s", kernelRelease, why))
		}
		h := g.host()
		h.KernelRelease = kernelRelease
		r, err := certify.Image(h)
		if err != nil {
			return usageError(err)
		}
		recorded := ""
		if !noRecord {
			if err := certified.Write(h.Root, r); err != nil {
				return usageError(fmt.Errorf("%w: the verdict (%s) is not recorded in the image; make %s writable, or pass --no-record", err, r.Verdict, certified.File))
			}
			recorded = certified.File
		}
		if err := writeCertificate(g.stdout, r, recorded, g.json()); err != nil {
			return failure("write output: %w", err)
		}
		if code := certify.ExitCode(r); code != ExitOK {
			return silentExit(code)
		}
		return nil
	})
	cmd.Flags().StringVar(&kernelRelease, "kernel-release", "", "judge this kernel release (one under /lib/modules) instead of the newest one installed in the image, or on a running build machine instead of the running kernel")
	cmd.Flags().BoolVar(&noRecord, "no-record", false, "print the verdict only; do not write "+certified.File+" into the image")
	return cmd
}

// writeCertificate prints the verdict: the record itself with -o json.
func writeCertificate(w io.Writer, r certified.Record, recorded string, asJSON bool) error {
	if !asJSON {
		_, err := io.WriteString(w, certify.Text(r, recorded))
		return err
	}
	data, err := certified.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
