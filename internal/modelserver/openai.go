package modelserver

import (
	"encoding/json"
	"net/http"
	"time"
)

// openAIAPI is the OpenAI Responses API: POST /v1/responses.
type openAIAPI struct{}

func (openAIAPI) name() API { return OpenAI }

func (openAIAPI) parse(body []byte) (*conversation, error) {
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Input  any    `json:"input"`
		Tools  []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
		Text *struct {
			Format *jsonFormat `json:"format"`
		} `json:"text"`
	}
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	c := &conversation{stream: req.Stream, model: req.Model, freeform: map[string]bool{}}
	for _, t := range req.Tools {
		if t.Type == "custom" {
			c.freeform[t.Name] = true
		}
	}
	switch in := req.Input.(type) {
	case string:
		c.users = append(c.users, userTurn{text: in})
	case []any:
		for _, it := range in {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			typ, _ := m["type"].(string)
			switch {
			case typ == "function_call_output" || typ == "custom_tool_call_output":
				if len(c.users) == 0 {
					c.users = append(c.users, userTurn{})
				}
				c.users[len(c.users)-1].results++
			case (typ == "message" || typ == "") && m["role"] == "user":
				c.users = append(c.users, userTurn{text: textOf(m["content"])})
			}
		}
	}
	if t := req.Text; t != nil && t.Format != nil && t.Format.Type == "json_schema" {
		c.schema = t.Format.schema()
	}
	return c, nil
}

func (openAIAPI) fail(w http.ResponseWriter, status int, msg string) {
	code := any(nil)
	typ := "server_error"
	switch status {
	case http.StatusUnauthorized:
		code, typ = "invalid_api_key", "invalid_request_error"
	case http.StatusTooManyRequests:
		code, typ = "rate_limit_exceeded", "requests"
	case http.StatusBadRequest, http.StatusNotFound:
		typ = "invalid_request_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

func (openAIAPI) reply(w http.ResponseWriter, c *conversation, step Step, done <-chan struct{}) {
	model := c.model
	if model == "" {
		model = "gpt-scripted"
	}
	respID := newID("resp_")
	created := time.Now().Unix()
	usage := map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}
	response := func(status string, output []any) map[string]any {
		r := map[string]any{"id": respID, "object": "response", "created_at": created, "status": status,
			"model": model, "output": output}
		if status == "completed" {
			r["usage"] = usage
		}
		return r
	}
	var item map[string]any
	switch step.Kind {
	case KindCall:
		callID := newID("call_")
		if c.freeform[step.Tool] {
			item = map[string]any{"type": "custom_tool_call", "id": newID("ctc_"), "call_id": callID,
				"name": step.Tool, "input": step.Input, "status": "completed"}
		} else {
			args, _ := json.Marshal(argsOf(step))
			item = map[string]any{"type": "function_call", "id": newID("fc_"), "call_id": callID,
				"name": step.Tool, "arguments": string(args), "status": "completed"}
		}
	default:
		item = map[string]any{"type": "message", "id": newID("msg_"), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": step.Text, "annotations": []any{}}}}
	}
	if !c.stream {
		if step.Kind == KindStall {
			<-done
			disconnect()
		}
		if step.Kind == KindDisconnect {
			disconnect()
		}
		writeJSON(w, http.StatusOK, response("completed", []any{item}))
		return
	}
	s := startSSE(w)
	if step.Kind == KindStall {
		<-done
		disconnect()
	}
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		s.event(typ, fields)
	}
	ev("response.created", map[string]any{"response": response("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": response("in_progress", []any{})})
	itemID := item["id"]
	switch item["type"] {
	case "function_call":
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["arguments"], added["status"] = "", "in_progress"
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		args := item["arguments"].(string)
		for _, part := range chunks(args) {
			ev("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": 0, "delta": part})
		}
		ev("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": 0, "arguments": args})
	case "custom_tool_call":
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["input"], added["status"] = "", "in_progress"
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		for _, part := range chunks(step.Input) {
			ev("response.custom_tool_call_input.delta", map[string]any{"item_id": itemID, "output_index": 0, "delta": part})
		}
		ev("response.custom_tool_call_input.done", map[string]any{"item_id": itemID, "output_index": 0, "input": step.Input})
	default:
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
			"type": "message", "id": itemID, "status": "in_progress", "role": "assistant", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, part := range chunks(step.Text) {
			ev("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "delta": part})
		}
		if step.Kind == KindDisconnect {
			disconnect()
		}
		ev("response.output_text.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "text": step.Text})
		ev("response.content_part.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": step.Text, "annotations": []any{}}})
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": response("completed", []any{item})})
}
