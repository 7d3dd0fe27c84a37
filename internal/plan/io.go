package plan

import (
	"encoding/json"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Mode lets operators and node-exporter read the plan; it holds no secret.
const Mode = 0o644

// Marshal renders p as indented JSON ending in a newline; equal plans give
// equal bytes, so rewriting an unchanged plan touches nothing.
func Marshal(p Plan) ([]byte, error) {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	return append(data, '\n'), nil
}

// Write records p at hostfs.PlanFile under root, atomically. It reports whether the
// file changed.
func Write(root hostfs.Root, p Plan) (bool, error) {
	data, err := Marshal(p)
	if err != nil {
		return false, err
	}
	changed, err := root.WriteFileAtomic(hostfs.PlanFile, data, Mode)
	if err != nil {
		return false, fmt.Errorf("write plan %s: %w", root.Path(hostfs.PlanFile), err)
	}
	return changed, nil
}

// Read loads the plan at hostfs.PlanFile under root. A missing file is returned as an
// error satisfying errors.Is(err, fs.ErrNotExist): apply has not run this boot.
func Read(root hostfs.Root) (Plan, error) {
	data, err := root.ReadFile(hostfs.PlanFile)
	if err != nil {
		return Plan{}, fmt.Errorf("read plan %s: %w", root.Path(hostfs.PlanFile), err)
	}
	p, err := Parse(data)
	if err != nil {
		return p, fmt.Errorf("plan %s is not valid JSON (%w); run `rke2-proxy-backend apply` to rewrite it", root.Path(hostfs.PlanFile), err)
	}
	return p, nil
}

// Parse decodes plan.json's bytes, for readers that fetch the file their
// own way (facts reads it bounded, as it reads every host file). The error
// is encoding/json's, unwrapped, so the caller can word it with the path.
func Parse(data []byte) (Plan, error) {
	var p Plan
	err := json.Unmarshal(data, &p)
	return p, err
}
