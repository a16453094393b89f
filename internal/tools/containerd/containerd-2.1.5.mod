module github.com/imgctl/imgctl/internal/tools/containerd

go 1.26.8

require github.com/containerd/containerd/v2 v2.1.5 // indirect
