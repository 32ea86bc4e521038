package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/agenttest"
	"github.com/gpusched/gpusched/service/api"
)

// upload sends a log chunk and returns the server's length.
func (a *testAgent) upload(replica string, off int64, data string) int64 {
	a.h.t.Helper()
	job, _, _ := strings.Cut(replica, ".")
	var ack api.LogAck
	a.h.call("POST", "/v1/agents/"+a.name+"/logs", api.LogChunk{Replica: replica, Job: job, Offset: off, Data: []byte(data)},
		http.StatusOK, &ack)
	return ack.Length
}

func TestLogUploadAndRead(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 1)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":1}`)
	r := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	for _, tc := range []struct {
		off  int64
		data string
		want int64
	}{
		{0, "hello\n", 6},
		{0, "hello\n", 6},      // resent: nothing appended
		{3, "lo\nwor", 9},      // overlaps: only "wor" appended
		{20, "far away", 9},    // beyond the end: dropped
		{9, "ld\npartial", 19}, // continues
		{19, "", 19},           // empty
		{-1, "x", 0},           // refused below
	} {
		if tc.off < 0 {
			if code, _ := h.do("POST", "/v1/agents/n1/logs", api.LogChunk{Replica: r.ID, Job: j.ID, Offset: -1}); code != 400 {
				t.Errorf("negative offset: %d", code)
			}
			continue
		}
		if got := a.upload(r.ID, tc.off, tc.data); got != tc.want {
			t.Errorf("upload at %d: length %d, want %d", tc.off, got, tc.want)
		}
	}
	for _, c := range []api.LogChunk{
		{Replica: "j1.1.0", Job: "j2", Data: []byte("x")},
		{Replica: "nonsense", Job: "j1"},
	} {
		if code, _ := h.do("POST", "/v1/agents/n1/logs", c); code != http.StatusBadRequest {
			t.Errorf("chunk %+v: %d, want 400", c, code)
		}
	}
	if code, _ := h.do("POST", "/v1/agents/n1/logs", api.LogChunk{Replica: "j1.9.0", Job: "j1"}); code != http.StatusNotFound {
		t.Errorf("chunk of a future attempt: %d, want 404", code)
	}
	code, body := h.do("GET", "/v1/jobs/"+j.ID+"/logs", nil)
	if code != 200 || string(body) != "hello\nworld\npartial" {
		t.Errorf("logs: %d %q", code, body)
	}
}

func TestLogsOfSeveralReplicasArePrefixed(t *testing.T) {
	h := newHarness(t, nil)
	a, b := h.agent("a", "v100", 1), h.agent("b", "v100", 1)
	a.register()
	b.register()
	j := h.submit(`{"command":["x"],"gpus":2}`)
	ra := *agenttest.FindReplica(a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	rb := *agenttest.FindReplica(b.waitWork("with "+j.ID, agenttest.HasReplica(j.ID)), j.ID)
	a.upload(ra.ID, 0, "one\ntwo\n")
	b.upload(rb.ID, 0, "three\nfour")
	_, body := h.do("GET", "/v1/jobs/"+j.ID+"/logs", nil)
	first, second := "["+ra.ID+"] one\n["+ra.ID+"] two\n", "["+rb.ID+"] three\n"
	if ra.ID > rb.ID {
		first, second = second, first
	}
	// The unfinished last line comes at the end, ended by a newline.
	want := first + second + "[" + rb.ID + "] four\n"
	if string(body) != want {
		t.Errorf("logs:\n%s\nwant:\n%s", body, want)
	}
}

func TestLogsFollow(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 1)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":1}`)
	w := a.waitWork("with "+j.ID, agenttest.HasReplica(j.ID))
	r := *agenttest.FindReplica(w, j.ID)
	a.upload(r.ID, 0, "first\n")
	resp, err := http.Get(h.http.URL + "/v1/jobs/" + j.ID + "/logs?follow=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("content type %q", ct)
	}
	buf := make([]byte, 64)
	n, err := resp.Body.Read(buf)
	if err != nil || string(buf[:n]) != "first\n" {
		t.Fatalf("first read: %q %v", buf[:n], err)
	}
	a.upload(r.ID, 6, "second\n")
	a.applied = w.Version
	a.status(agenttest.Exited(r, 0))
	a.upload(r.ID, 13, "last\n") // arrives after the job ended
	start := time.Now()
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "second\nlast\n" {
		t.Errorf("rest of the follow: %q %v", rest, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("follow took %s to end after the job", d)
	}
}
