// Command blang-semver answers questions about versions and ranges the way
// github.com/blang/semver/v4 does, the library OLM and opm use for bundle
// versions, skipRange and olm.package.required versionRange. Bosun's tests
// compare its own version kernel (src/olm/version.ts) against these answers.
//
// It reads one JSON request per line on stdin and writes one JSON answer per
// line on stdout:
//
//	{"op":"parse","text":"1.2.3"}              -> {"ok":true,"value":"1.2.3"}
//	{"op":"tolerant","text":"v1.2"}            -> {"ok":true,"value":"1.2.0"}
//	{"op":"compare","a":"1.0.0","b":"1.0.1"}   -> {"ok":true,"cmp":-1}
//	{"op":"range","text":">=1.0.0 !=1.0.5","versions":["1.0.5"]}
//	                                           -> {"ok":true,"tests":["false"]}
//
// A range test answers "true", "false", "panic" (blang's function panicked,
// which an empty alternative such as "1.0.0 || || 2.0.0" causes) or
// "invalid" (the version itself does not parse).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/blang/semver/v4"
)

type request struct {
	Op       string   `json:"op"`
	Text     string   `json:"text"`
	A        string   `json:"a"`
	B        string   `json:"b"`
	Versions []string `json:"versions"`
}

type answer struct {
	OK    bool     `json:"ok"`
	Error string   `json:"error,omitempty"`
	Value string   `json:"value,omitempty"`
	Cmp   *int     `json:"cmp,omitempty"`
	Tests []string `json:"tests,omitempty"`
}

func test(r semver.Range, v semver.Version) (out string) {
	defer func() {
		if recover() != nil {
			out = "panic"
		}
	}()
	if r(v) {
		return "true"
	}
	return "false"
}

func handle(req request) answer {
	switch req.Op {
	case "parse":
		v, err := semver.Parse(req.Text)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{OK: true, Value: v.String()}
	case "tolerant":
		v, err := semver.ParseTolerant(req.Text)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{OK: true, Value: v.String()}
	case "compare":
		a, err := semver.Parse(req.A)
		if err != nil {
			return answer{Error: err.Error()}
		}
		b, err := semver.Parse(req.B)
		if err != nil {
			return answer{Error: err.Error()}
		}
		c := a.Compare(b)
		return answer{OK: true, Cmp: &c}
	case "range":
		r, err := semver.ParseRange(req.Text)
		if err != nil {
			return answer{Error: err.Error()}
		}
		tests := make([]string, len(req.Versions))
		for i, s := range req.Versions {
			v, err := semver.Parse(s)
			if err != nil {
				tests[i] = "invalid"
				continue
			}
			tests[i] = test(r, v)
		}
		return answer{OK: true, Tests: tests}
	}
	return answer{Error: fmt.Sprintf("unknown op %q", req.Op)}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			enc.Encode(answer{Error: "bad request: " + err.Error()})
			out.Flush()
			continue
		}
		enc.Encode(handle(req))
		// Callers wait for each answer before asking again.
		out.Flush()
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
