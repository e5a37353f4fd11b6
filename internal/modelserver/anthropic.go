package modelserver

import (
	"encoding/json"
	"net/http"
)

// anthropicAPI is the Anthropic Messages API: POST /v1/messages.
type anthropicAPI struct{}

func (anthropicAPI) name() API { return Anthropic }

func (anthropicAPI) parse(body []byte) (*conversation, error) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		OutputFormat *jsonFormat `json:"output_format"`
		OutputConfig *struct {
			Format *jsonFormat `json:"format"`
		} `json:"output_config"`
	}
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	c := &conversation{stream: req.Stream, model: req.Model}
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		results := 0
		if blocks, ok := m.Content.([]any); ok {
			for _, b := range blocks {
				if bm, ok := b.(map[string]any); ok && bm["type"] == "tool_result" {
					results++
				}
			}
		}
		if results > 0 {
			if len(c.users) == 0 {
				c.users = append(c.users, userTurn{})
			}
			c.users[len(c.users)-1].results += results
			continue
		}
		c.users = append(c.users, userTurn{text: textOf(m.Content)})
	}
	if f := req.OutputFormat; f != nil && f.Type == "json_schema" {
		c.schema = f.schema()
	}
	if oc := req.OutputConfig; oc != nil && oc.Format != nil && oc.Format.Type == "json_schema" {
		c.schema = oc.Format.schema()
	}
	return c, nil
}

// jsonFormat is a structured output request.
type jsonFormat struct {
	Type   string         `json:"type"`
	Schema map[string]any `json:"schema"`
}

func (f *jsonFormat) schema() map[string]any {
	if f.Schema == nil {
		return map[string]any{}
	}
	return f.Schema
}

func (anthropicAPI) fail(w http.ResponseWriter, status int, msg string) {
	typ := "api_error"
	switch status {
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusForbidden:
		typ = "permission_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	w.Header().Set("Request-Id", newID("req_"))
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

func (anthropicAPI) reply(w http.ResponseWriter, c *conversation, step Step, done <-chan struct{}) {
	model := c.model
	if model == "" {
		model = "claude-scripted"
	}
	id := newID("msg_")
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	var block map[string]any
	stop := "end_turn"
	switch step.Kind {
	case KindCall:
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": newID("toolu_"), "name": step.Tool, "input": argsOf(step)}
	default:
		block = map[string]any{"type": "text", "text": step.Text}
	}
	if !c.stream {
		if step.Kind == KindStall {
			<-done
			disconnect()
		}
		if step.Kind == KindDisconnect {
			disconnect()
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	s := startSSE(w)
	if step.Kind == KindStall {
		<-done
		disconnect()
	}
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	s.event("ping", map[string]any{"type": "ping"})
	switch step.Kind {
	case KindCall:
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": step.Tool, "input": map[string]any{}}
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		args, _ := json.Marshal(block["input"])
		for _, part := range chunks(string(args)) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
	default:
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range chunks(step.Text) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": part}})
		}
		if step.Kind == KindDisconnect {
			disconnect()
		}
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// argsOf returns a call's arguments as a JSON object.
func argsOf(step Step) map[string]any {
	if step.Args != nil {
		return step.Args
	}
	if step.Input != "" {
		return map[string]any{"input": step.Input}
	}
	return map[string]any{}
}
