package platform

import v1 "github.com/google/go-containerregistry/pkg/v1"

// BaseChild picks, among the descriptors of a base's index, the image
// that gives want its base. It is the one rule imgctl applies wherever it
// takes a child of a base index: build's pins, pre-mount and graft,
// verify --layers, and rebase.
//
//  1. Only image manifests with a platform are candidates; attestation
//     manifests (the unknown/unknown platform BuildKit gives them, or the
//     vnd.docker.reference.type annotation) never are, and neither are
//     nested indexes.
//  2. Of the candidates of want's os, architecture and variant
//     (SameOSArch, after Normalize: arm64 is arm64/v8), the first whose
//     os.version equals want's is taken.
//  3. Else the first of want's build (SameBuild: for Windows, the same
//     build at any revision; for other OSes, any). A Windows want without
//     os.version (a HostProcess image) names no build: it takes the first
//     child without os.version, else the newest, as in step 4.
//  4. Else the newest of want's os and architecture (CompareNewestFirst),
//     with sameBuild false: a Windows child of another build, which only
//     a caller that allows a build change (rebase --allow-build-change)
//     accepts.
//
// Index order decides among equals, as containerd and BuildKit keep it
// for equal matches. ok is false when no candidate has want's os,
// architecture and variant. This is imgctl's choice for a base, not an
// engine's choice on a node (Engine.Select), and it does not fall back to
// another architecture (linux/386 for amd64) as containerd's Only does: a
// base of another architecture is an error for a build, not a variant.
func BaseChild(cands []v1.Descriptor, want Platform) (d v1.Descriptor, sameBuild, ok bool) {
	buildless := want.OSVersion == "" && Normalize(want).OS == "windows"
	var first, newest *v1.Descriptor
	for i := range cands {
		c := &cands[i]
		p := c.Platform
		if !c.MediaType.IsImage() || p == nil || isAttestation(*c) || !SameOSArch(want, *p) {
			continue
		}
		switch {
		case want.OSVersion != "" && p.OSVersion == want.OSVersion, buildless && p.OSVersion == "":
			return *c, true, true
		case !buildless && first == nil && SameBuild(want, *p):
			first = c
		}
		if newest == nil || (p.OSVersion != "" && CompareNewestFirst(p.OSVersion, newest.Platform.OSVersion) < 0) {
			newest = c
		}
	}
	switch {
	case first != nil:
		return *first, true, true
	case newest != nil:
		return *newest, SameBuild(want, *newest.Platform), true
	}
	return v1.Descriptor{}, false, false
}

// isAttestation is snapshot.IsAttestation, which this value package cannot
// import: BuildKit's annotation or its unknown/unknown platform.
func isAttestation(d v1.Descriptor) bool {
	return d.Annotations["vnd.docker.reference.type"] == "attestation-manifest" ||
		(d.Platform != nil && d.Platform.OS == "unknown" && d.Platform.Architecture == "unknown")
}
