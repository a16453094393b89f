module example.com/m

go 1.26

require (
	example.com/x v0.0.0
	github.com/google/go-containerregistry v0.0.0
)

replace (
	example.com/x => ./third_party/x
	github.com/google/go-containerregistry => ./third_party/ggcr
)
