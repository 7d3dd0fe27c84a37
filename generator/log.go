package generator

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/coreos/go-systemd/v22/journal"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Name is how the generator signs its log lines (journald shows it as the
// identifier of kernel-log lines written as "name: message").
const Name = "rke2-proxy-backend-generator"

// Syslog priorities for /dev/kmsg's "<N>" prefix.
const (
	prioErr     = 3
	prioWarning = 4
	prioInfo    = 6
)

// kmsgMax keeps one record under the kernel's per-write limit (1 KiB less
// the prefix), so a long reason list is cut, never split into records.
const kmsgMax = 900

// Logger writes one record per call to the kernel log (/dev/kmsg), which
// is there from the first instruction of a boot, before journald. Where
// there is no /dev/kmsg (containers: systemd-nspawn, docker, LXC hide it) it
// sends to the journal when journald is listening (daemon-reload, or a
// later generator run), else to stderr, which systemd connects to its own
// console output at boot. Tests and --root runs use stderr.
type Logger struct {
	w       io.Writer
	kmsg    bool
	journal bool
	file    *os.File
}

// OpenLogger opens /dev/kmsg when useKmsg is set and it can be opened for
// writing; failing that, the journal when journald is listening; else it
// logs to fallback.
func OpenLogger(useKmsg bool, fallback io.Writer) *Logger {
	return openLogger(useKmsg, hostfs.Kmsg, journal.Enabled, fallback)
}

func openLogger(useKmsg bool, kmsg string, journalEnabled func() bool, fallback io.Writer) *Logger {
	if !useKmsg {
		return &Logger{w: fallback}
	}
	if f, err := os.OpenFile(kmsg, os.O_WRONLY|os.O_APPEND, 0); err == nil {
		return &Logger{w: f, kmsg: true, file: f}
	}
	return &Logger{w: fallback, journal: journalEnabled()}
}

// Sink names where the lines go, for tests and the README's Logs section.
func (l *Logger) Sink() string {
	switch {
	case l.kmsg:
		return "kmsg"
	case l.journal:
		return "journal"
	}
	return "stderr"
}

// NewLogger logs to w in stderr style; for tests.
func NewLogger(w io.Writer) *Logger { return &Logger{w: w} }

// Close releases /dev/kmsg.
func (l *Logger) Close() {
	if l.file != nil {
		l.file.Close()
	}
}

func (l *Logger) Info(format string, args ...any)  { l.log(prioInfo, format, args...) }
func (l *Logger) Warn(format string, args ...any)  { l.log(prioWarning, format, args...) }
func (l *Logger) Error(format string, args ...any) { l.log(prioErr, format, args...) }

func (l *Logger) log(prio int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	// One record per call: a newline inside would start a record without
	// our prefix and priority.
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > kmsgMax {
		msg = msg[:kmsgMax] + "..."
	}
	if l.kmsg {
		fmt.Fprintf(l.w, "<%d>%s: %s\n", prio, Name, msg)
		return
	}
	if l.journal {
		err := journal.Send(msg, journal.Priority(prio), map[string]string{"SYSLOG_IDENTIFIER": Name})
		if err == nil {
			return
		}
	}
	level := map[int]string{prioErr: "error", prioWarning: "warning", prioInfo: "info"}[prio]
	fmt.Fprintf(l.w, "%s: %s: %s\n", Name, level, msg)
}
