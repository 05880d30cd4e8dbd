package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseStatusFixture(t *testing.T) {
	f, err := os.Open("testdata/proc-status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := parseStatus(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.RSS, int64(123904*1024); got != want {
		t.Errorf("RSS: got %d, want %d", got, want)
	}
	if got, want := m.HWM, int64(187392*1024); got != want {
		t.Errorf("HWM: got %d, want %d", got, want)
	}
}

func TestParseStatusRejects(t *testing.T) {
	for name, text := range map[string]string{
		"kernel thread": "Name:\tkthreadd\nState:\tS (sleeping)\n",
		"no VmHWM":      "VmRSS:\t  1760 kB\n",
		"bad unit":      "VmHWM:\t  1760 kB\nVmRSS:\t  1760 MB\n",
		"bad number":    "VmHWM:\t  17x0 kB\nVmRSS:\t  1760 kB\n",
	} {
		t.Run(name, func(t *testing.T) {
			if m, err := parseStatus(strings.NewReader(text)); err == nil {
				t.Errorf("got %+v, want an error", m)
			}
		})
	}
}

// TestSamplerKeepsPeak rewrites a status file between samples: the sampler
// must report the highest VmRSS, not the last, and the last VmHWM.
func TestSamplerKeepsPeak(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status")
	write := func(rssKB, hwmKB string) {
		t.Helper()
		tmp := path + ".tmp" // rename, so that a sample never sees half a file
		if err := os.WriteFile(tmp, []byte("VmHWM:\t"+hwmKB+" kB\nVmRSS:\t"+rssKB+" kB\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("1000", "5000")
	s, err := startRSSAt(path, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	write("3000", "5000")
	time.Sleep(60 * time.Millisecond)
	write("2000", "6000")
	m, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.RSS, int64(3000*1024); got != want {
		t.Errorf("peak RSS: got %d, want %d", got, want)
	}
	if got, want := m.HWM, int64(6000*1024); got != want {
		t.Errorf("HWM: got %d, want %d (the last reading)", got, want)
	}
}

func TestSamplerOwnProcess(t *testing.T) {
	s, err := startRSS(os.Getpid(), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.HWM < m.RSS {
		t.Errorf("got %+v, want 0 < RSS <= HWM", m)
	}
}

func TestStartRSSRefusesMissingProcess(t *testing.T) {
	if _, err := startRSSAt(filepath.Join(t.TempDir(), "no-such-status"), time.Second); err == nil {
		t.Error("got no error for a missing status file")
	}
}
