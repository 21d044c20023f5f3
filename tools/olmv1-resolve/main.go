// Command olmv1-resolve answers resolution questions with operator-controller v1.2.0's own
// ClusterExtension resolver (internal/operator-controller/resolve.CatalogResolver), for Bosun's
// differential test. Go forbids importing a module's internal packages from another module, so
// this file is not built here: the test support copies the released module, unmodified, from the
// module cache and maps this file into it with `go build -overlay` (test/support/go-tool.ts).
//
// Each line on stdin is one scenario (JSON): the ClusterCatalogs (name, priority, labels,
// availabilityMode, whether served, and their content as catalogd's JSON Lines), a ClusterExtension's
// spec.source.catalog and the installed bundle if any. Each line on stdout is the answer: the
// bundle chosen (name, version, catalog) with the package's deprecation if any, or the error text.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	"github.com/operator-framework/operator-controller/internal/operator-controller/catalogmetadata/cache"
	catalogclient "github.com/operator-framework/operator-controller/internal/operator-controller/catalogmetadata/client"
	"github.com/operator-framework/operator-controller/internal/operator-controller/resolve"
)

type catalog struct {
	Name             string            `json:"name"`
	Priority         int32             `json:"priority"`
	Labels           map[string]string `json:"labels"`
	AvailabilityMode string            `json:"availabilityMode"`
	// Unserved: the catalog exists but has no Serving=True condition.
	Unserved bool   `json:"unserved"`
	FBC      string `json:"fbc"`
}

type scenario struct {
	Catalogs  []catalog            `json:"catalogs"`
	Source    ocv1.CatalogFilter   `json:"source"`
	Installed *ocv1.BundleMetadata `json:"installed"`
}

type chosen struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Catalog string `json:"catalog"`
}

type answer struct {
	Bundle      *chosen              `json:"bundle,omitempty"`
	Deprecation *declcfg.Deprecation `json:"deprecation,omitempty"`
	Error       string               `json:"error,omitempty"`
}

// The catalog a bundle came from, as a property the oracle adds after loading: the resolver
// returns the bundle but not its catalog, and reads only olm.package among the properties.
const fromCatalog = "bosun.oracle.catalog"

func solve(ctx context.Context, s scenario, cacheDir string) answer {
	fsCache := cache.NewFilesystemCache(cacheDir)
	cl := catalogclient.New(fsCache, nil)
	var cats []ocv1.ClusterCatalog
	for i, c := range s.Catalogs {
		ref := fmt.Sprintf("registry.test/%s@sha256:%064d", c.Name, i)
		cat := ocv1.ClusterCatalog{
			ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: c.Labels},
			Spec: ocv1.ClusterCatalogSpec{
				Priority:         c.Priority,
				AvailabilityMode: ocv1.AvailabilityMode(c.AvailabilityMode),
			},
			Status: ocv1.ClusterCatalogStatus{
				ResolvedSource: &ocv1.ResolvedCatalogSource{
					Type:  ocv1.SourceTypeImage,
					Image: &ocv1.ResolvedImageSource{Ref: ref},
				},
			},
		}
		if cat.Spec.AvailabilityMode == "" {
			cat.Spec.AvailabilityMode = ocv1.AvailabilityModeAvailable
		}
		if !c.Unserved {
			meta.SetStatusCondition(&cat.Status.Conditions, metav1.Condition{
				Type: ocv1.TypeServing, Status: metav1.ConditionTrue, Reason: ocv1.ReasonAvailable,
			})
		}
		// What operator-controller's catalog client does with catalogd's /api/v1/all body.
		if _, err := fsCache.Put(c.Name, ref, strings.NewReader(c.FBC), nil); err != nil {
			return answer{Error: fmt.Sprintf("oracle: caching catalog %q: %v", c.Name, err)}
		}
		cats = append(cats, cat)
	}
	// The API server lists cluster-scoped objects in name order.
	sort.Slice(cats, func(i, j int) bool { return cats[i].Name < cats[j].Name })

	listCatalogs := func(_ context.Context, opts ...client.ListOption) ([]ocv1.ClusterCatalog, error) {
		lo := client.ListOptions{}
		for _, o := range opts {
			o.ApplyToList(&lo)
		}
		sel := lo.LabelSelector
		if sel == nil {
			sel = labels.Everything()
		}
		var out []ocv1.ClusterCatalog
		for _, c := range cats {
			if sel.Matches(labels.Set(c.Labels)) {
				out = append(out, c)
			}
		}
		return out, nil
	}
	getPackage := func(ctx context.Context, cat *ocv1.ClusterCatalog, pkg string) (*declcfg.DeclarativeConfig, error) {
		fbc, err := cl.GetPackage(ctx, cat, pkg)
		if fbc != nil {
			for i := range fbc.Bundles {
				v, _ := json.Marshal(cat.Name)
				fbc.Bundles[i].Properties = append(fbc.Bundles[i].Properties, property.Property{Type: fromCatalog, Value: v})
			}
		}
		return fbc, err
	}
	r := resolve.CatalogResolver{WalkCatalogsFunc: resolve.CatalogWalker(listCatalogs, getPackage)}
	ext := &ocv1.ClusterExtension{Spec: ocv1.ClusterExtensionSpec{Source: ocv1.SourceConfig{
		SourceType: ocv1.SourceTypeCatalog,
		Catalog:    &s.Source,
	}}}
	bundle, version, deprecation, err := r.Resolve(ctx, ext, s.Installed)
	if err != nil {
		return answer{Error: err.Error()}
	}
	c := chosen{Name: bundle.Name, Version: version.String()}
	for _, p := range bundle.Properties {
		if p.Type == fromCatalog {
			_ = json.Unmarshal(p.Value, &c.Catalog)
		}
	}
	return answer{Bundle: &c, Deprecation: deprecation}
}

func main() {
	ctx := context.Background()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 256<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var s scenario
		var a answer
		if err := json.Unmarshal(in.Bytes(), &s); err != nil {
			a = answer{Error: fmt.Sprintf("oracle: reading the scenario: %v", err)}
		} else {
			dir, err := os.MkdirTemp("", "olmv1-resolve-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			a = solve(ctx, s, dir)
			_ = os.RemoveAll(dir)
		}
		if err := out.Encode(a); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
