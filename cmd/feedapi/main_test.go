package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph/keys"
)

// The tests of this file's siblings run the real feedapi binary: built once
// per test binary, started as a child process per test on its own database,
// and always killed when the test ends.

// readyTimeout bounds how long a process may take to listen and to report
// itself healthy, generous for a loaded CI machine.
const readyTimeout = 30 * time.Second

var (
	binDir    string
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "feedapi-test-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		binDir = dir
		return dbtest.Main(m)
	}()
	os.Exit(code)
}

// binary returns the path of the feedapi binary, building it on first use.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		goCmd, err := exec.LookPath("go")
		if err != nil {
			buildErr = err
			return
		}
		path := filepath.Join(binDir, "feedapi")
		out, err := exec.Command(goCmd, "build", "-o", path, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		binPath = path
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// lockedBuffer collects a process's output; safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// process is a running `feedapi serve`.
type process struct {
	t      testing.TB
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:port
	addr   string // 127.0.0.1:port
	stderr *lockedBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // Wait's result, once exited is closed
}

// startServer runs `feedapi serve` with the environment env (on top of a
// clean one) and extra flags. It listens on a port the kernel picks (the
// address is read from the "serving" log line, so two processes never race
// for a port) and returns once /v1/health answers 200. The process is killed
// when the test ends, if it still runs.
func startServer(t testing.TB, env map[string]string, flags ...string) *process {
	t.Helper()
	p := startProcess(t, env, flags...)
	p.waitHealthy(http.StatusOK)
	return p
}

// startProcess is startServer without waiting for health.
func startProcess(t testing.TB, env map[string]string, flags ...string) *process {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...)
	cmd := exec.Command(binary(t), args...)
	cmd.Env = processEnv(env)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{t: t, cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start feedapi: %v", err)
	}
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("feedapi stderr:\n%s", p.stderr)
		}
	})
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.stderr.Write([]byte(line + "\n"))
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" {
				select {
				case addrc <- rec.Addr:
				default:
				}
			}
		}
		_, _ = io.Copy(p.stderr, stderr)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	select {
	case p.addr = <-addrc:
	case <-p.exited:
		t.Fatalf("feedapi exited before serving: %v\n%s", p.err, p.stderr)
	case <-time.After(readyTimeout):
		t.Fatalf("feedapi did not listen within %s:\n%s", readyTimeout, p.stderr)
	}
	p.base = "http://" + p.addr
	return p
}

// processEnv returns the environment of a child: the test's own minus
// feedapi's settings, plus env.
func processEnv(env map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "FEEDAPI_") || name == "DATABASE_URL" || name == "REDIS_URL" {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// waitHealthy polls /v1/health until it answers status.
func (p *process) waitHealthy(status int) {
	p.t.Helper()
	deadline := time.Now().Add(readyTimeout)
	var last string
	for time.Now().Before(deadline) {
		r, err := send(p.base, http.MethodGet, "/v1/health", "", nil, nil)
		if err == nil && r.status == status {
			return
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%d %s", r.status, r.body)
		}
		select {
		case <-p.exited:
			p.t.Fatalf("feedapi exited: %v\n%s", p.err, p.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	p.t.Fatalf("/v1/health did not answer %d within %s (last: %s)\n%s", status, readyTimeout, last, p.stderr)
}

// signal sends sig to the process.
func (p *process) signal(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits up to d for the process to exit and returns its exit code.
func (p *process) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(d):
		p.t.Fatalf("feedapi still running %s after it was told to stop", d)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		p.t.Fatalf("wait: %v", p.err)
	}
	return 0
}

// logRecords returns the process's JSON log lines, decoded.
func (p *process) logRecords() []map[string]any {
	var out []map[string]any
	for line := range strings.SplitSeq(p.stderr.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// response is one answer of the service, read whole.
type response struct {
	status  int
	header  http.Header
	body    []byte
	elapsed time.Duration
	env     struct {
		Data  json.RawMessage `json:"data"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Meta struct {
			RequestID string `json:"request_id"`
		} `json:"meta"`
	}
}

// errorCode returns the envelope's error.code ("" when there is none).
func (r *response) errorCode() string {
	if r.env.Error == nil {
		return ""
	}
	return r.env.Error.Code
}

// httpClient keeps no connections between requests, so that each request
// sees the listener's current state, and gives up after a minute.
var httpClient = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true},
	Timeout:   time.Minute,
}

// send makes one request to base+path with the key (none when ""), the body
// and header pairs, and decodes the envelope when the body is JSON.
func send(base, method, path, key string, body []byte, header map[string]string) (*response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	hr, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer hr.Body.Close()
	r := &response{status: hr.StatusCode, header: hr.Header}
	r.body, err = io.ReadAll(hr.Body)
	r.elapsed = time.Since(start)
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal(r.body, &r.env)
	return r, nil
}

// get is send of a GET that fails the test on a transport error and checks
// the body for leaked internals.
func (p *process) get(t testing.TB, path, key string) *response {
	t.Helper()
	r, err := send(p.base, http.MethodGet, path, key, nil, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	checkNoLeak(t, "GET "+path, r)
	return r
}

// Text that must never reach a client: keys, stacks and driver or SQL
// text. errorLeaks apply to error responses only, as a post's body could
// legitimately mention SQL.
var (
	alwaysLeaks = []string{keys.Prefix, "goroutine ", "runtime/debug", "panic:", "pgconn", "pgx", "pq:", "SQLSTATE"}
	errorLeaks  = regexp.MustCompile(`(?i)select |insert |\bsql\b|postgres|dial tcp|127\.0\.0\.1|connection refused|timeout|\.go:\d+`)
)

// checkNoLeak fails the test when r's body carries internals.
func checkNoLeak(t testing.TB, what string, r *response) {
	t.Helper()
	for _, s := range alwaysLeaks {
		if bytes.Contains(r.body, []byte(s)) {
			t.Errorf("%s: %d body contains %q: %.300s", what, r.status, s, r.body)
		}
	}
	if r.status >= 400 {
		if m := errorLeaks.Find(r.body); m != nil {
			t.Errorf("%s: %d body contains %q: %.300s", what, r.status, m, r.body)
		}
	}
}

// withHost returns the database URL u with its host and port replaced.
func withHost(t testing.TB, u, hostPort string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pu.Host = hostPort
	return pu.String()
}

// newKey issues a key of the tier directly in the database.
func newKey(t testing.TB, bdb *bun.DB, tier db.Tier) (secret string, id int64) {
	t.Helper()
	secret, k, err := keys.NewService(bdb, keys.Options{}).Create(context.Background(), tier, "test "+string(tier))
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	return secret, k.ID
}

// runCommand runs the binary with args and env and returns its stdout,
// failing the test unless it exits 0.
func runCommand(t testing.TB, env map[string]string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = processEnv(env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("feedapi %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// isRefused reports whether err is a refused TCP connection.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// dialRefused reports whether a TCP connection to addr is refused now.
func dialRefused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return isRefused(err)
}
