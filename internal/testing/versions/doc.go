// Package versions keeps the tools modules (internal/tools/distribution,
// cosign and buildx, and internal/testing/workflows) at imgctl's versions of every
// module they compile too. Its test is the whole package.
//
// Why it matters: the Go build cache shares a compiled package between two
// builds only when its source is the same version, so a dependency the
// cosign CLI compiles at one version and imgctl's tests at another is
// compiled twice. On a cold cache the tools modules' own pins made CI
// compile about 900 packages (gRPC, the Kubernetes API, the AWS SDK, the
// OpenTelemetry SDK, x/net, ...) a second time (docs/measurements.md).
// Each tools module still builds its tool from the version it pins; only
// the dependencies it shares with imgctl are raised to imgctl's versions.
package versions
