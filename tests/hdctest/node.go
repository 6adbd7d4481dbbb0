package hdctest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// nodeCallTimeout bounds one call of a script: a worker that stopped
// answering fails the test instead of hanging it.
const nodeCallTimeout = 2 * time.Minute

// Node runs one of the tests/interop scripts with stdin and returns its
// standard output; a failure (a status other than 0) is returned with its
// standard error. The scripts run in tests/interop/worker.mjs, one node
// process for the whole test process, as each would run as a program:
// node and the libraries load once, not once a call.
func Node(t testing.TB, stdin []byte, script string, args ...string) ([]byte, error) {
	t.Helper()
	w, err := theNodeWorker()
	if err != nil {
		t.Fatalf("tests/interop/worker.mjs: %v", err)
	}
	a, err := w.call(script, args, stdin)
	if err != nil {
		t.Fatalf("tests/interop/worker.mjs, %s %v: %v", script, args, err)
	}
	if a.Code != 0 {
		return a.Stdout, fmt.Errorf("node %s %v: exit status %d: %s", script, args, a.Code, a.Stderr)
	}
	return a.Stdout, nil
}

// nodeRequest and nodeAnswer are worker.mjs's lines.
type nodeRequest struct {
	ID     int      `json:"id"`
	Script string   `json:"script"`
	Args   []string `json:"args"`
	Stdin  []byte   `json:"stdin"`
}

type nodeAnswer struct {
	ID     int    `json:"id"`
	Code   int    `json:"code"`
	Stdout []byte `json:"stdout"`
	Stderr string `json:"stderr"`
}

// nodeWorker is the running worker.mjs: requests are written under mu,
// and read answers go to the call waiting for their id.
type nodeWorker struct {
	mu      sync.Mutex
	stdin   io.WriteCloser
	enc     *json.Encoder
	next    int
	waiting map[int]chan nodeAnswer
	ended   error // why the worker ended, once it has
}

var worker struct {
	once sync.Once
	w    *nodeWorker
	err  error
}

// theNodeWorker starts worker.mjs the first time it is asked for. It runs
// until the test process exits, which closes its standard input.
func theNodeWorker() (*nodeWorker, error) {
	worker.once.Do(func() { worker.w, worker.err = startNodeWorker() })
	return worker.w, worker.err
}

func startNodeWorker() (*nodeWorker, error) {
	cmd := exec.Command("node", filepath.Join(RepoRoot, "tests", "interop", "worker.mjs"))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &nodeWorker{stdin: stdin, enc: json.NewEncoder(stdin), waiting: map[int]chan nodeAnswer{}}
	go w.read(bufio.NewReader(stdout), cmd)
	return w, nil
}

// read hands each answer to its call until the worker ends, then fails
// the calls still waiting.
func (w *nodeWorker) read(r *bufio.Reader, cmd *exec.Cmd) {
	dec := json.NewDecoder(r)
	for {
		var a nodeAnswer
		if err := dec.Decode(&a); err != nil {
			w.end(fmt.Errorf("its answers ended: %v (exit: %v)", err, cmd.Wait()))
			return
		}
		w.mu.Lock()
		ch := w.waiting[a.ID]
		delete(w.waiting, a.ID)
		w.mu.Unlock()
		if ch != nil {
			ch <- a
		}
	}
}

func (w *nodeWorker) end(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended = err
	for id, ch := range w.waiting {
		close(ch)
		delete(w.waiting, id)
	}
}

// call sends one request and waits for its answer.
func (w *nodeWorker) call(script string, args []string, stdin []byte) (nodeAnswer, error) {
	ch := make(chan nodeAnswer, 1)
	w.mu.Lock()
	if w.ended != nil {
		w.mu.Unlock()
		return nodeAnswer{}, w.ended
	}
	w.next++
	id := w.next
	w.waiting[id] = ch
	err := w.enc.Encode(nodeRequest{ID: id, Script: script, Args: args, Stdin: stdin})
	w.mu.Unlock()
	if err != nil {
		return nodeAnswer{}, err
	}
	select {
	case a, ok := <-ch:
		if !ok {
			return nodeAnswer{}, w.whyEnded()
		}
		return a, nil
	case <-time.After(nodeCallTimeout):
		return nodeAnswer{}, errors.New("no answer within " + nodeCallTimeout.String())
	}
}

func (w *nodeWorker) whyEnded() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}
