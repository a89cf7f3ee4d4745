package ollamatest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/internal/ollamatest"
)

func chat(t *testing.T, c *api.Client, stream *bool) (string, []api.ChatResponse, error) {
	t.Helper()
	var b strings.Builder
	var all []api.ChatResponse
	err := c.Chat(t.Context(), &api.ChatRequest{Model: "m", Stream: stream, Messages: []api.Message{{Role: "user", Content: "hi"}}}, func(r api.ChatResponse) error {
		b.WriteString(r.Message.Content)
		all = append(all, r)
		return nil
	})
	return b.String(), all, err
}

func TestChat(t *testing.T) {
	no := false
	t.Run("non-streaming: one object", func(t *testing.T) {
		srv := ollamatest.New(t, ollamatest.Content(`{"a":1}`))
		got, all, err := chat(t, srv.Client(), &no)
		require.NoError(t, err)
		assert.Equal(t, `{"a":1}`, got)
		require.Len(t, all, 1)
		assert.True(t, all[0].Done)
		assert.Equal(t, "stop", all[0].DoneReason)
		assert.Equal(t, "assistant", all[0].Message.Role)
		assert.Equal(t, "m", all[0].Model)
		assert.Positive(t, all[0].EvalCount)
		assert.False(t, srv.Requests()[0].Streaming())
	})
	t.Run("streaming by default: NDJSON chunks", func(t *testing.T) {
		srv := ollamatest.New(t, ollamatest.Fixed(ollamatest.Reply{Content: "hello world", Chunk: 4}))
		got, all, err := chat(t, srv.Client(), nil)
		require.NoError(t, err)
		assert.Equal(t, "hello world", got)
		require.Len(t, all, 4) // "hell" "o wo" "rld" + done
		assert.False(t, all[0].Done)
		assert.True(t, all[3].Done)
	})
	t.Run("404 model not found", func(t *testing.T) {
		srv := ollamatest.New(t, ollamatest.Fixed(ollamatest.NotFound("x")))
		_, _, err := chat(t, srv.Client(), &no)
		var se api.StatusError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, http.StatusNotFound, se.StatusCode)
		assert.Equal(t, `model "x" not found, try pulling it first`, se.ErrorMessage)
	})
	t.Run("500", func(t *testing.T) {
		srv := ollamatest.New(t, ollamatest.Fixed(ollamatest.ServerError()))
		_, _, err := chat(t, srv.Client(), &no)
		var se api.StatusError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, http.StatusInternalServerError, se.StatusCode)
	})
	t.Run("queue then last repeats", func(t *testing.T) {
		srv := ollamatest.New(t, ollamatest.Queue(ollamatest.Reply{Content: "a"}, ollamatest.Reply{Content: "b"}))
		for _, want := range []string{"a", "b", "b"} {
			got, _, err := chat(t, srv.Client(), &no)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		}
		reqs := srv.Requests()
		require.Len(t, reqs, 3)
		assert.Equal(t, []int{1, 2, 3}, []int{reqs[0].N, reqs[1].N, reqs[2].N})
		assert.Equal(t, "hi", reqs[0].Messages[0].Content)
	})
	t.Run("bad requests", func(t *testing.T) {
		srv := ollamatest.New(t, nil)
		resp, err := http.Post(srv.URL+"/api/chat", "application/json", bytes.NewReader([]byte(`{"messages":[]}`)))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "model is required")
		resp, err = http.Get(srv.URL + "/api/chat")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
}

func TestEmbed(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.Config{Embed: func(model string, input []string) [][]float32 {
		out := make([][]float32, len(input))
		for i, s := range input {
			out[i] = []float32{float32(len(s)), 1}
		}
		return out
	}})
	resp, err := srv.Client().Embed(t.Context(), &api.EmbedRequest{Model: "e", Input: []string{"ab", "abc"}})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{2, 1}, {3, 1}}, resp.Embeddings)
	assert.Equal(t, []string{"ab", "abc"}, srv.Requests()[0].Input)

	none := ollamatest.New(t, nil)
	_, err = none.Client().Embed(t.Context(), &api.EmbedRequest{Model: "e", Input: "x"})
	var se api.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusNotFound, se.StatusCode)
	raw, _ := json.Marshal(none.Requests()[0].Input)
	assert.JSONEq(t, `["x"]`, string(raw))
}
