package fleetview

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// TerminalWidth is the width of the terminal on fd (the table's stdout),
// else $COLUMNS, else 0 (the table fits DefaultWidth), as kubectl and ls
// learn it.
func TerminalWidth(fd int, getenv func(string) string) int {
	if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}
