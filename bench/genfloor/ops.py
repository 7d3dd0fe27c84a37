"""Turn `strace -f` of one generator run into genfloor's operations.

Usage: ops.py STRACE-FILE GENERATOR-PATH OUTPUT-DIR
Prints one KIND:PATH per line: the generator's lookups, reads, directory
listings, its log line and its drop-ins (their final paths), in order.
Left out: what the Go runtime opens by itself (the floor's runtime opens
it too), the program loader's files before the generator's execve, and
the writer's own checks in the output directory (the floor writes there
its own way), and a repeat of an operation on the same path (a careful
generator looks each path up once).
"""
import re
import sys

trace, generator, out = sys.argv[1], sys.argv[2], sys.argv[3].rstrip("/") + "/"
runtime = ("/sys/kernel/mm/transparent_hugepage/", "/sys/fs/cgroup", "/proc/self/cgroup", "/proc/self/mountinfo")
call = re.compile(r'^(?:\d+ +)?(execve|openat|newfstatat|readlinkat|renameat2?)\((AT_FDCWD, )?"([^"]*)"(.*)$')
started = False
seen = set()


def emit(op):
    if op not in seen:
        seen.add(op)
        print(op)


for line in open(trace):
    m = call.match(line)
    if not m:
        continue
    name, at, path, rest = m.groups()
    if name == "execve":
        started = path == generator
        continue
    if not started or not path.startswith("/") or path.startswith(runtime):
        continue
    if name.startswith("renameat"):
        new = re.search(r'"([^"]*)"', rest)
        if new and new.group(1).startswith(out):
            emit("write:" + new.group(1))
        continue
    if path.startswith(out) or path + "/" == out:
        continue
    if name == "newfstatat":
        emit("stat:" + path)
    elif name == "readlinkat":
        emit("link:" + path)
    elif "O_CREAT" in rest:
        continue
    elif "O_DIRECTORY" in rest:
        emit("dir:" + path)
    elif "O_WRONLY" in rest:
        emit("log:" + path)
    else:
        emit("read:" + path)
