// Package platform owns every rule about platforms and Windows os.version in
// imgctl: parsing and formatting platform strings, the LTSC release table,
// the Windows builds that image tags name (TagBuild: ltsc2022, 1809, 20H2,
// windowsservercore-ltsc2025, 10.0.20348.2582...), and the engine profiles
// (containerd 2.x, containerd 1.7, Docker) that pick the variant of an index
// a node would run.
//
// No other package parses os.version strings; they ask this one.
package platform
