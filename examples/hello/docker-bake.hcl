# imgctl bake (run in examples/hello) builds each target into one verified
# index: linux/amd64, linux/arm64 and one Windows variant per LTSC release,
# each FROM WINDOWS_BASE with {ltsc} replaced. The matrix makes two images,
# hello (distroless) and hello-debug (distroless with a busybox shell), from
# the one Dockerfile; `imgctl bake --print` shows them.
variable "REGISTRY" {
  default = "registry.example.com"
}
variable "VERSION" {
  default = "dev"
}
variable "GOLANG_IMAGE" {
  default = "golang:1.26"
}

group "default" {
  targets = ["hello"]
}

target "hello" {
  name = "hello-${flavor.name}"
  matrix = {
    flavor = [
      { name = "release", linux_base = "gcr.io/distroless/static-debian12:nonroot", suffix = "" },
      { name = "debug", linux_base = "gcr.io/distroless/static-debian12:debug-nonroot", suffix = "-debug" },
    ]
  }
  context   = "."
  platforms = ["linux/amd64", "linux/arm64", "ltsc2022", "ltsc2025"]
  args = {
    GOLANG_IMAGE = GOLANG_IMAGE
    LINUX_BASE   = flavor.linux_base
    WINDOWS_BASE = "mcr.microsoft.com/windows/nanoserver:{ltsc}"
    VERSION      = VERSION
  }
  tags = ["${REGISTRY}/hello:${VERSION}${flavor.suffix}"]
}
