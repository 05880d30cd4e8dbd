//go:build linux

package rest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/live"
)

// TestDeadPeerFreesItsSlot: a client whose network vanishes (no FIN, no
// RST: its link goes down) holds its stream's slot for about three
// heartbeats, not until the kernel's retransmissions give up (a quarter of
// an hour). The client runs in a network namespace of its own, joined to
// the server by a veth pair, so that the test can take its link down;
// that needs root and iproute2.
func TestDeadPeerFreesItsSlot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace (ip netns)")
	}
	for _, bin := range []string{"ip", "curl"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("needs %s", bin)
		}
	}
	pid := os.Getpid()
	ns := fmt.Sprintf("feedapi-t%d", pid)
	host, peer := fmt.Sprintf("fa%dh", pid%100000), fmt.Sprintf("fa%dc", pid%100000)
	subnet := fmt.Sprintf("10.%d.%d", 100+pid/65536%100, pid/256%256)
	serverIP, clientIP := subnet+".1", subnet+".2"
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("ip", "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	run("ip", "link", "add", host, "type", "veth", "peer", "name", peer)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", host).Run() })
	run("ip", "link", "set", peer, "netns", ns)
	run("ip", "addr", "add", serverIP+"/30", "dev", host)
	run("ip", "link", "set", host, "up")
	run("ip", "netns", "exec", ns, "ip", "addr", "add", clientIP+"/30", "dev", peer)
	run("ip", "netns", "exec", ns, "ip", "link", "set", peer, "up")

	lv := live.New(live.Config{Heartbeat: time.Second})
	a := newAPI(t, func(c *Config) { c.Live = lv })
	key, id := a.newKeyID(db.TierFree)
	ln, err := net.Listen("tcp", serverIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer("", a.handler, lv.Config().DeadPeer())
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	curl := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "curl", "-sN", "--max-time", "600",
		"-H", "Authorization: Bearer "+key, "http://"+ln.Addr().String()+"/v1/posts/stream")
	out, err := curl.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := curl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = curl.Wait() })
	first, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(first, ": feedapi stream") {
		t.Fatalf("the client's stream: %q, %v", first, err)
	}
	waitFor(t, "the stream open", func() bool { return lv.Opened(id) == 1 })

	// The client's network vanishes: its link goes down; it sends nothing
	// more, not even a reset.
	run("ip", "netns", "exec", ns, "ip", "link", "set", peer, "down")
	gone := time.Now()
	deadline := gone.Add(2 * time.Minute)
	for lv.Opened(id) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the stream of a vanished client still holds its slot %v later", time.Since(gone).Round(time.Second))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the vanished client's slot was freed %v after its link went down (heartbeat 1 s)", time.Since(gone).Round(10*time.Millisecond))
}
