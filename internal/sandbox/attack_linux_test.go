package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// These tests replay what an adversarial run did from inside a sandboxed
// command. Each fails on the helper that confined only with Landlock.

// needIsolation skips a test where the sandbox or its namespaces are not
// available on this machine.
func needIsolation(t *testing.T) {
	t.Helper()
	if ok, why := Available(); !ok {
		t.Skip("no sandbox here: " + why)
	}
	if !isolationProbe() {
		t.Skip("this kernel does not allow user namespaces")
	}
}

// runWithin runs command and fails the test when it does not end within
// limit; then it stops it.
func runWithin(t *testing.T, ws, command string, p Policy, limit time.Duration) string {
	t.Helper()
	pr, pw, _ := os.Pipe()
	p.Workspace = ws
	c, err := Start(Spec{Shell: "/bin/bash", Command: command, Dir: ws, Env: Environ(os.Environ(), nil), Output: pw, Policy: p})
	pw.Close()
	if err != nil {
		pr.Close()
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(limit):
		t.Errorf("the command did not end within %s", limit)
	}
	c.Stop()
	pr.SetReadDeadline(time.Now().Add(time.Second))
	var out strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := pr.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	pr.Close()
	return out.String()
}

// assertNothingLate waits past the delay of a background writer and fails
// if it wrote its file.
func assertNothingLate(t *testing.T, path string) {
	t.Helper()
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(path); err == nil {
		t.Errorf("a process of the command outlived it and wrote %s", filepath.Base(path))
	}
}

func TestSetsidChildSurvivesKillingTheHelper(t *testing.T) {
	needIsolation(t)
	ws := t.TempDir()
	// The helper is the shell's parent, seen through the command's own
	// /proc as the shell's parent process ID.
	runWithin(t, ws, "setsid sh -c 'sleep 0.8; echo late > late' & kill -9 $PPID $(cut -d' ' -f4 /proc/$$/stat); sleep 0.1", Policy{}, 10*time.Second)
	assertNothingLate(t, filepath.Join(ws, "late"))
}

func TestSetsidChildSurvivesStoppingTheHelper(t *testing.T) {
	needIsolation(t)
	ws := t.TempDir()
	runWithin(t, ws, "setsid sh -c 'sleep 0.8; echo late > late' & kill -STOP $(cut -d' ' -f4 /proc/$$/stat); sleep 0.1", Policy{}, 10*time.Second)
	assertNothingLate(t, filepath.Join(ws, "late"))
}

func TestCommandReadsOtherProcessesThroughProc(t *testing.T) {
	needIsolation(t)
	ws := t.TempDir()
	out := runWithin(t, ws, fmt.Sprintf("cat /proc/%d/cmdline && echo SEEN; ls /proc | grep -c '^[0-9]'", os.Getpid()), Policy{}, 10*time.Second)
	if strings.Contains(out, "SEEN") {
		t.Errorf("the command read Tally's /proc entry: %q", out)
	}
}

// perlConnect is a command that connects to a Unix socket (a leading "@"
// names an abstract one) and prints CONNECTED on success.
func perlConnect(path string) string {
	if strings.HasPrefix(path, "@") {
		path = `\0` + path[1:]
	}
	return `perl -MSocket -e 'socket(S, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n"; connect(S, pack_sockaddr_un("` + path + `")) or die "connect: $!\n"; print "CONNECTED\n"'`
}

// listenUnix accepts connections on a Unix socket and counts them; the
// count is read while the accepting goroutine may still run, so it is
// atomic.
func listenUnix(t *testing.T, addr string) *atomic.Int32 {
	t.Helper()
	l, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return &n
}

func TestCommandConnectsToAppSocketOutsideWorkspace(t *testing.T) {
	needIsolation(t)
	ws := t.TempDir()
	sock := filepath.Join(t.TempDir(), "tally.sock")
	accepted := listenUnix(t, sock)
	out := runWithin(t, ws, perlConnect(sock), Policy{AllowNetwork: true}, 10*time.Second)
	if strings.Contains(out, "CONNECTED") || accepted.Load() != 0 {
		t.Errorf("the command reached a Unix socket outside the workspace: %q", out)
	}
	if !strings.Contains(out, "Permission denied") {
		t.Errorf("output %q does not say the socket was refused", out)
	}
}

func TestCommandReachesAbstractXServerSocket(t *testing.T) {
	needIsolation(t)
	ws := t.TempDir()
	name := fmt.Sprintf("@/tmp/.X11-unix/X%d", 1000+os.Getpid()%1000)
	accepted := listenUnix(t, name)
	// With the network switch on too: the X server is never the
	// command's to talk to.
	for _, network := range []bool{false, true} {
		out := runWithin(t, ws, perlConnect(name), Policy{AllowNetwork: network}, 10*time.Second)
		if strings.Contains(out, "CONNECTED") || accepted.Load() != 0 {
			t.Errorf("network %v: the command reached the X server's abstract socket: %q", network, out)
		}
	}
}

func TestUDPAndMultipathTCPPassWithNetworkOff(t *testing.T) {
	needIsolation(t)
	ws := t.TempDir()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	got := make(chan string, 2)
	go func() {
		buf := make([]byte, 64)
		if n, _, err := udp.ReadFrom(buf); err == nil {
			got <- "udp:" + string(buf[:n])
		}
	}()
	go func() {
		if c, err := tcp.Accept(); err == nil {
			c.Close()
			got <- "mptcp connection"
		}
	}()
	udpPort := udp.LocalAddr().(*net.UDPAddr).Port
	tcpPort := tcp.Addr().(*net.TCPAddr).Port
	cmd := fmt.Sprintf(`perl -MSocket -e 'socket(U, PF_INET, SOCK_DGRAM, 0) or die "udp socket: $!\n"; send(U, "leak", 0, pack_sockaddr_in(%d, inet_aton("127.0.0.1"))) or print "udp: $!\n"; socket(M, PF_INET, SOCK_STREAM, 262) or die "mptcp socket: $!\n"; connect(M, pack_sockaddr_in(%d, inet_aton("127.0.0.1"))) or print "mptcp: $!\n"'`, udpPort, tcpPort)
	out := runWithin(t, ws, cmd, Policy{}, 10*time.Second)
	select {
	case what := <-got:
		t.Errorf("with the network off, the command's %s reached the machine (output %q)", what, out)
	case <-time.After(500 * time.Millisecond):
	}
}

func TestCommandReadsXauthority(t *testing.T) {
	if ok, why := Available(); !ok {
		t.Skip("no sandbox here: " + why)
	}
	ws := t.TempDir()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".Xauthority"), []byte("MIT-MAGIC-COOKIE-1 secretcookie"), 0o600); err != nil {
		t.Fatal(err)
	}
	pr, pw, _ := os.Pipe()
	env := append(Environ(os.Environ(), nil), "HOME="+home)
	c, err := Start(Spec{Shell: "/bin/bash", Command: "cat ~/.Xauthority ~/.ICEauthority", Dir: ws, Env: env, Output: pw, Policy: Policy{Workspace: ws}})
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	b := make([]byte, 4096)
	pr.SetReadDeadline(time.Now().Add(time.Second))
	n, _ := pr.Read(b)
	pr.Close()
	if strings.Contains(string(b[:n]), "secretcookie") {
		t.Errorf("the command read the X server's cookie: %q", b[:n])
	}
}
