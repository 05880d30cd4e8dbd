package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memory is what /proc/<pid>/status says about a process's resident memory.
type memory struct {
	// RSS is the resident set size at the moment of reading (VmRSS), in bytes.
	RSS int64
	// HWM is the peak resident set size over the process's whole life
	// (VmHWM), in bytes. It never goes down, so it says nothing about one run
	// unless the server was started just before it.
	HWM int64
}

// parseStatus reads VmRSS and VmHWM from the text of /proc/<pid>/status.
// Both must be present: a kernel thread or a zombie has neither.
func parseStatus(r io.Reader) (memory, error) {
	var m memory
	var seenRSS, seenHWM bool
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		n, err := parseKB(value)
		if err != nil {
			return memory{}, fmt.Errorf("%s: %w", key, err)
		}
		if key == "VmRSS" {
			m.RSS, seenRSS = n, true
		} else {
			m.HWM, seenHWM = n, true
		}
	}
	if err := sc.Err(); err != nil {
		return memory{}, err
	}
	if !seenRSS || !seenHWM {
		return memory{}, errors.New("no VmRSS or VmHWM line (kernel thread or exited process?)")
	}
	return m, nil
}

// parseKB parses a status value such as "\t  123456 kB" into bytes.
func parseKB(s string) (int64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), " ")
	if unit != "kB" {
		return 0, fmt.Errorf("unexpected unit in %q", strings.TrimSpace(s))
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", num)
	}
	return n * 1024, nil
}

// readStatus reads and parses the status file at path.
func readStatus(path string) (memory, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return memory{}, err
	}
	m, err := parseStatus(bytes.NewReader(b))
	if err != nil {
		return memory{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// rssSampler samples a process's VmRSS periodically during one attack and
// keeps the peak: VmHWM alone would report the peak of the process's whole
// life, including earlier runs.
type rssSampler struct {
	path string
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	peak int64
	err  error
}

// startRSS reads /proc/<pid>/status once, so that a wrong pid fails before
// the attack, then samples it every interval until Stop.
func startRSS(pid int, interval time.Duration) (*rssSampler, error) {
	return startRSSAt(statusPath(pid), interval)
}

// statusPath is the status file of process pid.
func statusPath(pid int) string { return fmt.Sprintf("/proc/%d/status", pid) }

// startRSSAt is startRSS for any status file (tests pass a fixture).
func startRSSAt(path string, interval time.Duration) (*rssSampler, error) {
	m, err := readStatus(path)
	if err != nil {
		return nil, fmt.Errorf("read server memory: %w", err)
	}
	s := &rssSampler{path: path, stop: make(chan struct{}), done: make(chan struct{}), peak: m.RSS}
	go s.loop(interval)
	return s, nil
}

func (s *rssSampler) loop(interval time.Duration) {
	defer close(s.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sample()
		}
	}
}

// sample reads VmRSS once and raises the peak. The first failure is kept
// (the server may have exited); later samples are still tried.
func (s *rssSampler) sample() memory {
	m, err := readStatus(s.path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return memory{}
	}
	s.peak = max(s.peak, m.RSS)
	return m
}

// Stop ends the sampling, takes a last sample and returns the peak VmRSS seen
// and the process's VmHWM at the end.
func (s *rssSampler) Stop() (memory, error) {
	close(s.stop)
	<-s.done
	last := s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return memory{RSS: s.peak, HWM: last.HWM}, s.err
}
