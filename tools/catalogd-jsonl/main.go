// catalogd-jsonl writes a file-based catalog as OLM v1's catalogd stores it for /api/v1/all
// (operator-controller v1.2.0, internal/catalogd/storage/localdir.go storeCatalogData): every
// meta opm's declcfg.WalkMetasFS finds under the folder, one after another, in walk order, each
// as its Blob (opm's re-encoding of the document). A test oracle for Bosun's catalogd API.
//
// Usage: catalogd-jsonl <catalog folder>  (the JSON Lines on stdout)
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: catalogd-jsonl <catalog folder>")
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	err := declcfg.WalkMetasFS(context.Background(), os.DirFS(os.Args[1]), func(path string, meta *declcfg.Meta, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		_, werr := out.Write(meta.Blob)
		return werr
	}, declcfg.WithConcurrency(1))
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
