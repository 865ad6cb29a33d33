package agent

import (
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/storage"
)

// blobLoader reads stored texts for retrieve_tool_result by their SHA-256
// or by a handle's leading digits (see compact.Handle).
func blobLoader(st *storage.Store) tool.BlobLoader {
	return func(key string) ([]byte, error) {
		data, _, err := st.BlobByPrefix(key)
		return data, err
	}
}
