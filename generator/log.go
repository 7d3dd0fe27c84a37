package generator

import (
	"fmt"
	"io"
	"os"
	"strings"

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

// Logger writes one record per call to /dev/kmsg, or to stderr when the
// kernel log cannot be opened (containers, tests, --root runs).
type Logger struct {
	w    io.Writer
	kmsg bool
	file *os.File
}

// OpenLogger opens /dev/kmsg when useKmsg is set and it can be opened for
// writing, else logs to fallback.
func OpenLogger(useKmsg bool, fallback io.Writer) *Logger {
	if useKmsg {
		if f, err := os.OpenFile(hostfs.Kmsg, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			return &Logger{w: f, kmsg: true, file: f}
		}
	}
	return &Logger{w: fallback}
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
	level := map[int]string{prioErr: "error", prioWarning: "warning", prioInfo: "info"}[prio]
	fmt.Fprintf(l.w, "%s: %s: %s\n", Name, level, msg)
}
