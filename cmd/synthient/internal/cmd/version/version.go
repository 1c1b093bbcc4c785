// Package version is the version command, and the root's --version: the
// build, as the binary knows it.
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
)

// BuildInfo is what the binary knows of its own build: the SDK's version,
// the module's as the Go toolchain recorded it, the VCS revision and time
// when it was built from a checkout, and the Go version.
type BuildInfo struct {
	Version       string `json:"version"`                  // synthient.Version
	ModuleVersion string `json:"module_version,omitempty"` // "(devel)" from a checkout, v1.2.3 from go install ...@v1.2.3
	Revision      string `json:"revision,omitempty"`       // the VCS commit
	Time          string `json:"time,omitempty"`           // the commit's time, RFC 3339
	Modified      bool   `json:"modified,omitempty"`       // the checkout had uncommitted changes
	Go            string `json:"go"`                       // the Go version that built it
	Platform      string `json:"platform"`                 // GOOS/GOARCH
}

// ReadBuildInfo returns the binary's BuildInfo, from runtime/debug.
func ReadBuildInfo() BuildInfo {
	b := BuildInfo{Version: synthient.Version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.ModuleVersion = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String renders b on one line, such as "synthient 0.1.0 (module (devel),
// commit 35faa96a1b2c, 2026-12-01T16:00:00Z, modified; go1.26.8
// linux/amd64)".
func (b BuildInfo) String() string {
	var parts []string
	if b.ModuleVersion != "" {
		parts = append(parts, "module "+b.ModuleVersion)
	}
	if b.Revision != "" {
		parts = append(parts, "commit "+b.Revision[:min(len(b.Revision), 12)])
	}
	if b.Time != "" {
		parts = append(parts, b.Time)
	}
	if b.Modified {
		parts = append(parts, "modified")
	}
	build := b.Go + " " + b.Platform
	if len(parts) > 0 {
		build = strings.Join(parts, ", ") + "; " + build
	}
	return fmt.Sprintf("synthient %s (%s)", b.Version, build)
}

// Options are the options of version.
type Options struct {
	Printer *output.Printer
}

// NewCmdVersion returns version.
func NewCmdVersion(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit it was built from, and the Go version",
		Args:  cmdutil.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			opts.Printer = f.Printer
			return Write(opts.Printer, opts.Printer.Out)
		},
	}
	cmdutil.SetExamples(cmd, "synthient version", "synthient version -o json")
	return cmd
}

// Write writes the build's description to w, in p's format.
func Write(p *output.Printer, w io.Writer) error {
	b := ReadBuildInfo()
	if p.JSON() {
		return p.EmitTo(w, b)
	}
	_, err := fmt.Fprintln(w, b)
	return err
}
