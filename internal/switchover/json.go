package switchover

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// JSONOutcome is `switch -o json`'s one document: what the text form says,
// line by line, the ipvs translation report as records, and the error
// that ended the switch ("" for none; the exit code is the text form's).
type JSONOutcome struct {
	Lines           []string      `json:"lines"`
	IPVSTranslation []Translation `json:"ipvs_translation,omitempty"`
	Error           string        `json:"error,omitempty"`
	// Refused is set when the switch refused before changing anything.
	Refused bool `json:"refused,omitempty"`
}

// doJSON runs Do with its text collected, then writes the document.
func doJSON(ctx context.Context, r Request) error {
	var text bytes.Buffer
	var report []Translation
	out := r.Out
	r.Out, r.JSON, r.report = &text, false, &report
	err := Do(ctx, r)
	doc := JSONOutcome{Lines: []string{}, IPVSTranslation: report}
	for _, line := range strings.Split(strings.TrimRight(text.String(), "\n"), "\n") {
		if line != "" {
			doc.Lines = append(doc.Lines, line)
		}
	}
	var u *UsageError
	if err != nil {
		doc.Error, doc.Refused = err.Error(), errors.As(err, &u)
	}
	data, jerr := json.MarshalIndent(doc, "", "  ")
	if jerr != nil {
		return errors.Join(err, jerr)
	}
	if _, werr := out.Write(append(data, '\n')); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}
