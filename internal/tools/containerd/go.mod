// This go.mod only marks the module root. Each containerd release has its
// own module file, containerd-VERSION.mod (with .sum), which
// internal/testing/enginegolden passes to the go command with -modfile.
module github.com/imgctl/imgctl/internal/tools/containerd

go 1.26.8
