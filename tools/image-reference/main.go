// Command image-reference answers whether image pull specs are valid the way
// opm's catalog loader decides it: github.com/distribution/reference's
// ParseNormalizedNamed (the library and version operator-registry v1.73.0
// uses). Bosun's tests compare src/olm/image-reference.ts against it.
//
// It reads one JSON string per line on stdin and writes one JSON answer per
// line on stdout: {"ok":true} or {"ok":false,"error":"..."}.
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
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var ref string
		if err := json.Unmarshal(in.Bytes(), &ref); err != nil {
			enc.Encode(answer{Error: "bad request: " + err.Error()})
			continue
		}
		if _, err := reference.ParseNormalizedNamed(ref); err != nil {
			enc.Encode(answer{Error: err.Error()})
		} else {
			enc.Encode(answer{OK: true})
		}
		// Each answer goes out at once: the caller waits for it before asking the next.
		out.Flush()
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
