// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

// Airlock patch (see PATCHES.md): this file.

package mcp

// noCacheFields, embedded in a struct beside a result that embeds
// Cacheable, hides the result's ttlMs and cacheScope when marshalled: its
// fields are less deeply nested than the result's own, so encoding/json
// takes them instead, and, nil, omits them.
type noCacheFields struct {
	TTLMs      *int    `json:"ttlMs,omitempty"`
	CacheScope *string `json:"cacheScope,omitempty"`
}

// The cacheable results as a session of a revision before 2026-07-28 gets
// them: without the cache fields of SEP-2549, which its revision does not
// have (a server of that revision does not send them).
type (
	listToolsResultBefore20260728 struct {
		*ListToolsResult
		noCacheFields
	}
	listPromptsResultBefore20260728 struct {
		*ListPromptsResult
		noCacheFields
	}
	listResourcesResultBefore20260728 struct {
		*ListResourcesResult
		noCacheFields
	}
	listResourceTemplatesResultBefore20260728 struct {
		*ListResourceTemplatesResult
		noCacheFields
	}
	readResourceResultBefore20260728 struct{ *ReadResourceResult }
)

func (x readResourceResultBefore20260728) MarshalJSON() ([]byte, error) {
	return x.ReadResourceResult.marshal(false)
}

// beforeRevision20260728 is res as it is sent on a session of a revision
// before 2026-07-28: a cacheable result without its ttlMs and cacheScope,
// anything else as it is. The value is for marshalling only.
func beforeRevision20260728(res Result) any {
	switch r := res.(type) {
	case *ListToolsResult:
		if r != nil {
			return listToolsResultBefore20260728{ListToolsResult: r}
		}
	case *ListPromptsResult:
		if r != nil {
			return listPromptsResultBefore20260728{ListPromptsResult: r}
		}
	case *ListResourcesResult:
		if r != nil {
			return listResourcesResultBefore20260728{ListResourcesResult: r}
		}
	case *ListResourceTemplatesResult:
		if r != nil {
			return listResourceTemplatesResultBefore20260728{ListResourceTemplatesResult: r}
		}
	case *ReadResourceResult:
		if r != nil {
			return readResourceResultBefore20260728{r}
		}
	}
	return res
}
