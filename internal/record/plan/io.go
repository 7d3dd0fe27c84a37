package plan

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Mode lets operators and node-exporter read the plan; it holds no secret.
const Mode = 0o644

// Marshal renders p as indented JSON ending in a newline; equal plans give
// equal bytes, so rewriting an unchanged plan touches nothing.
func Marshal(p Plan) ([]byte, error) {
	p.Schema = Schema
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
	var schema *SchemaError
	switch {
	case errors.As(err, &schema):
		return p, fmt.Errorf("plan %s: %w", root.Path(hostfs.PlanFile), err)
	case err != nil:
		return p, fmt.Errorf("plan %s is not valid JSON (%w); run `rke2-proxy-backend apply` to rewrite it", root.Path(hostfs.PlanFile), err)
	}
	return p, nil
}

// Parse decodes plan.json's bytes, for readers that fetch the file their
// own way (facts reads it bounded, as it reads every host file). The error
// is encoding/json's, unwrapped, so the caller can word it with the path,
// or a *SchemaError for a schema this version does not know. A document of
// schema 1, or without "schema" (the version before, same layout), reads
// as what it recorded, in schema 2's shape (parseV1).
func Parse(data []byte) (Plan, error) {
	var head struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Plan{}, err
	}
	switch {
	case head.Schema == nil || *head.Schema == 1:
		return parseV1(data)
	case *head.Schema != Schema:
		return Plan{}, &SchemaError{Value: *head.Schema}
	}
	var p Plan
	err := json.Unmarshal(data, &p)
	p.Schema = Schema
	return p, err
}

// SchemaError is a plan.json whose schema this version cannot read: a
// newer rke2-proxy-backend wrote it (a downgrade on a running node), or
// something else did. Guessing at its keys could verify the wrong backend.
type SchemaError struct {
	Value int
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("schema %d is not one this rke2-proxy-backend reads (it reads schemas 1 and %d): a newer version wrote it; "+
		"install that version again, or remove the file and run `rke2-proxy-backend adopt` (it records what runs now, without restarting RKE2)", e.Value, Schema)
}
