// Command image-reference answers whether image pull specs are valid the way
// opm's catalog loader decides it: github.com/distribution/reference's
// ParseNormalizedNamed (the library and version operator-registry v1.73.0
// uses). Bosun's tests compare src/olm/image-reference.ts against it.
//
// It reads one JSON string per line on stdin and writes one JSON answer per
// line on stdout: {"ok":true,"domain":"...","path":"...","tag":"...","digest":"..."} (tag and
// digest when the reference has them) or {"ok":false,"error":"..."}.
package main

import (
	"bufio"
	// opm links these hashes (registries are read over TLS, bundles are digested), and a digest
	// algorithm counts as supported only when its hash is linked into the program.
	_ "crypto/sha256"
	_ "crypto/sha512"
	"encoding/json"
	"fmt"
	"os"

	"github.com/distribution/reference"
)

type answer struct {
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	Domain string `json:"domain,omitempty"`
	Path   string `json:"path,omitempty"`
	Tag    string `json:"tag,omitempty"`
	Digest string `json:"digest,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		enc.Encode(ask(in.Bytes()))
		// Each answer goes out at once: the caller waits for it before asking the next.
		out.Flush()
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func ask(line []byte) answer {
	var ref string
	if err := json.Unmarshal(line, &ref); err != nil {
		return answer{Error: "bad request: " + err.Error()}
	}
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return answer{Error: err.Error()}
	}
	a := answer{OK: true, Domain: reference.Domain(named), Path: reference.Path(named)}
	if t, ok := named.(reference.Tagged); ok {
		a.Tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		a.Digest = d.Digest().String()
	}
	return a
}
