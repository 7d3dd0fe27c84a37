package certified

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Mode: operators and scripts read the record; it holds no secret.
const Mode = 0o644

// maxRecord bounds the read: a record is a few KiB.
const maxRecord = 1 << 20

// Marshal renders r as indented JSON ending in a newline, with the schema
// this version writes; equal records give equal bytes (no timestamp), so
// an image built twice from the same inputs is the same image.
func Marshal(r Record) ([]byte, error) {
	r.Schema = Schema
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the certificate: %w", err)
	}
	return append(data, '\n'), nil
}

// Write records r at File under root, atomically and durably.
func Write(root hostfs.Root, r Record) error {
	data, err := Marshal(r)
	if err != nil {
		return err
	}
	if _, err := root.WriteFileAtomic(File, data, Mode); err != nil {
		return fmt.Errorf("write the certificate %s: %w", root.Path(File), err)
	}
	return nil
}

// Read reads the record under root. found is false, with no error, when
// the image was never certified.
func Read(root hostfs.Root) (r Record, found bool, err error) {
	data, err := root.ReadFileMax(File, maxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, true, fmt.Errorf("read the certificate %s: %w", File, err)
	}
	r, err = Parse(data)
	if err != nil {
		return Record{}, true, fmt.Errorf("the certificate %s: %w; certify the image again (rke2-proxy-backend certify --root IMAGE) or remove the file", File, err)
	}
	return r, true, nil
}

// Parse decodes a record, refusing a schema this version does not know:
// guessing at a newer record's keys could report differences that are not.
func Parse(data []byte) (Record, error) {
	var head struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Record{}, fmt.Errorf("not valid JSON: %w", err)
	}
	if head.Schema == nil || *head.Schema != Schema {
		got := "none"
		if head.Schema != nil {
			got = fmt.Sprint(*head.Schema)
		}
		return Record{}, fmt.Errorf("schema %s is not one this rke2-proxy-backend reads (it reads schema %d)", got, Schema)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, fmt.Errorf("not valid JSON: %w", err)
	}
	return r, nil
}
