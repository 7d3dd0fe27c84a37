package generator

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

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
	w    io.Writer
	kmsg bool
	// kmsgFD is /dev/kmsg's descriptor when kmsg is set, written with
	// write(2) (kmsgWriter): an *os.File would add the device to Go's
	// poller, and the poller's set-up (epoll, an eventfd, two
	// registrations) would be every boot's.
	kmsgFD int
	// journal is a datagram socket connected to journald's (nil: none).
	journal *os.File
}

// JournalSocket is journald's socket for the native protocol.
const JournalSocket = "/run/systemd/journal/socket"

// OpenLogger opens /dev/kmsg when useKmsg is set and it can be opened for
// writing; failing that, the journal when journald is listening; else it
// logs to fallback.
func OpenLogger(useKmsg bool, fallback io.Writer) *Logger {
	return openLogger(useKmsg, hostfs.Kmsg, JournalSocket, fallback)
}

func openLogger(useKmsg bool, kmsg, journalSocket string, fallback io.Writer) *Logger {
	if !useKmsg {
		return &Logger{w: fallback}
	}
	if fd, err := syscall.Open(kmsg, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CLOEXEC, 0); err == nil {
		return &Logger{w: kmsgWriter(fd), kmsg: true, kmsgFD: fd}
	}
	return &Logger{w: fallback, journal: dialJournal(journalSocket)}
}

// dialJournal connects a datagram socket to journald's, or returns nil
// when nobody listens there. The generator speaks journald's native
// protocol itself (one datagram per record, a KEY=value line per field)
// rather than through a client library, whose net.Dial would link the
// resolver and TCP into the program every boot starts.
func dialJournal(socket string) *os.File {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: socket}); err != nil {
		syscall.Close(fd)
		return nil
	}
	return os.NewFile(uintptr(fd), socket)
}

// Sink names where the lines go, for tests and the Logs section of docs/configuration.md.
func (l *Logger) Sink() string {
	switch {
	case l.kmsg:
		return "kmsg"
	case l.journal != nil:
		return "journal"
	}
	return "stderr"
}

// NewLogger logs to w in stderr style; for tests.
func NewLogger(w io.Writer) *Logger { return &Logger{w: w} }

// Close releases /dev/kmsg or the journal's socket.
func (l *Logger) Close() {
	if l.kmsg {
		syscall.Close(l.kmsgFD)
	}
	if l.journal != nil {
		l.journal.Close()
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
	if l.journal != nil {
		// msg is one line (above), so each field is one KEY=value line.
		record := "PRIORITY=" + strconv.Itoa(prio) + "\nSYSLOG_IDENTIFIER=" + Name + "\nMESSAGE=" + msg + "\n"
		if _, err := l.journal.WriteString(record); err == nil {
			return
		}
	}
	level := map[int]string{prioErr: "error", prioWarning: "warning", prioInfo: "info"}[prio]
	fmt.Fprintf(l.w, "%s: %s: %s\n", Name, level, msg)
}

// kmsgWriter writes each record with one write(2), as /dev/kmsg wants (one
// write is one kernel log record).
type kmsgWriter int

func (fd kmsgWriter) Write(p []byte) (int, error) {
	for {
		n, err := syscall.Write(int(fd), p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		return n, nil
	}
}
