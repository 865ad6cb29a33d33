package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// setParentDeathSignal makes the kernel send sig to the child when the
// thread that started it dies. Go keeps its threads alive, so in practice
// this is when the whole process dies.
func setParentDeathSignal(attr *syscall.SysProcAttr, sig syscall.Signal) {
	attr.Pdeathsig = sig
}

// SetChildSubreaper makes the calling process the reaper of its orphaned
// descendants: a process below it whose parent dies (including one that
// called setsid) is reparented to it rather than to init, so it stays
// visible to [Descendants]. The caller must then reap them with wait4.
func SetChildSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// Descendants returns the process IDs of every process below pid that has
// not exited yet (zombies are left out), found by walking the parent links
// in /proc. The list is a snapshot: processes may start or end meanwhile.
func Descendants(pid int) ([]int, error) {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return nil, err
	}
	children := make(map[int][]int)
	zombie := make(map[int]bool)
	for _, name := range names {
		p, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		ppid, state, ok := readStat(p)
		if !ok {
			continue // gone meanwhile
		}
		children[ppid] = append(children[ppid], p)
		if state == 'Z' || state == 'X' {
			zombie[p] = true
		}
	}
	var out []int
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if seen[c] {
				continue
			}
			seen[c] = true
			queue = append(queue, c)
			if !zombie[c] {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// readStat returns the parent process ID and the state letter of pid from
// /proc/pid/stat.
func readStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name in parentheses may itself hold spaces and ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(string(fields[1]))
	if err != nil {
		return 0, 0, false
	}
	return ppid, fields[0][0], true
}
