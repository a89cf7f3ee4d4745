package weaviatetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

func decodeJSON(resp *http.Response, v any) error {
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	return json.Unmarshal(b, v)
}
