// opm v1.73.0, the catalog tool of operator-registry, built from its Go module so tests can
// compare Bosun's catalog commands with it. The module serves no version list, so `go install
// ...@v1.73.0` is refused; this module requires it instead and runs its command tree.
//
// One command is added: `semver-dirs FILE` renders a semver template whose bundle references
// are bundle directories. opm's own `alpha render-template semver` takes only bundle images,
// which need a registry; the channels and package come from opm's semver template itself.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/operator-framework/operator-registry/alpha/action"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/template/semver"
	"github.com/operator-framework/operator-registry/cmd/opm/root"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cmd := root.NewCmd(false)
	cmd.AddCommand(semverDirs())
	if err := cmd.ExecuteContext(ctx); err != nil {
		os.Exit(1)
	}
}

func semverDirs() *cobra.Command {
	var imageRefTemplate string
	cmd := &cobra.Command{
		Use:   "semver-dirs FILE",
		Short: "Render a semver template whose bundles are bundle directories (JSON out)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The template tells bundles apart by image, and a directory's image is empty.
			tmpl, err := template.New("image").Parse(imageRefTemplate)
			if err != nil {
				return err
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			render := func(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
				r := action.Render{Refs: []string{ref}, AllowedRefMask: action.RefBundleDir, ImageRefTemplate: tmpl}
				return r.Run(ctx)
			}
			cfg, err := (&semver.Factory{}).CreateTemplate(render).Render(cmd.Context(), f)
			if err != nil {
				return fmt.Errorf("rendering template: %w", err)
			}
			return declcfg.WriteJSON(*cfg, os.Stdout)
		},
	}
	cmd.Flags().StringVar(&imageRefTemplate, "image-ref-template", "bundles.example/{{.Package}}:v{{.Version}}",
		"the image each bundle directory is given")
	return cmd
}
