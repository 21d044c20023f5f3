module bosun.local/tools/blang-semver

go 1.21

require github.com/blang/semver/v4 v4.0.0
