package workspace

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/files"
	"github.com/ahp-go/ahp/workspace/watch"
)

// unclaimedWatch is how long a watch may wait for its first subscriber
// before it is released.
const unclaimedWatch = 30 * time.Second

// watchChan is one resource-watch channel and its OS watch.
type watchChan struct {
	w    *Workspace
	uri  string
	once sync.Once
	fw   *watch.Watch
}

// createResourceWatch opens a watch on a path in the caller's scope. The
// watch is released when its last subscriber leaves, or when nobody
// subscribes within unclaimedWatch.
func createResourceWatch(ctx context.Context, w *Workspace, c host.Client, p *protocol.CreateResourceWatchParams) (*protocol.CreateResourceWatchResult, error) {
	info, err := w.files.Resolve(ctx, w.scope(c), p.URI, true)
	if err != nil {
		return nil, wireError("createResourceWatch", err)
	}
	root, _ := files.PathOf(info.URI)
	state := &protocol.ResourceWatchState{Root: info.URI, Recursive: deref(p.Recursive)}
	opts := watch.Options{Root: root, Recursive: state.Recursive}
	if p.Excludes != nil {
		opts.Excludes = p.Excludes.Items
		state.Excludes = &protocol.ResourceWatchStateExcludes{Items: p.Excludes.Items}
	}
	if p.Includes != nil {
		opts.Includes = p.Includes.Items
		state.Includes = &protocol.ResourceWatchStateIncludes{Items: p.Includes.Items}
	}
	wc := &watchChan{w: w, uri: "ahp-resource-watch:/" + newID()}
	if err := w.h.OpenChannel(wc.uri, state, wc); err != nil {
		return nil, &protocol.Error{Code: protocol.CodeInternalError, Message: "createResourceWatch: " + err.Error()}
	}
	fw, err := watch.Start(opts, wc.deliver)
	if err != nil {
		w.h.CloseChannel(wc.uri)
		code := protocol.CodeInvalidParams
		if errors.Is(err, watch.ErrLimit) {
			code = protocol.CodeInternalError
		}
		return nil, &protocol.Error{Code: code, Message: "createResourceWatch: " + err.Error()}
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		fw.Close()
		w.h.CloseChannel(wc.uri)
		return nil, &protocol.Error{Code: protocol.CodeInternalError, Message: "createResourceWatch: the host is shutting down"}
	}
	wc.fw = fw
	w.watches[wc.uri] = wc
	w.mu.Unlock()
	w.wg.Go(func() {
		select {
		case <-time.After(unclaimedWatch):
			if w.h.Subscribers(wc.uri) == 0 {
				wc.release()
			}
		case <-w.stop:
		}
	})
	return &protocol.CreateResourceWatchResult{Channel: wc.uri}, nil
}

func (wc *watchChan) deliver(batch []watch.Change) {
	items := make([]protocol.ResourceChange, 0, len(batch))
	for _, c := range batch {
		t := protocol.ResourceChangeTypeUpdated
		switch c.Type {
		case watch.Added:
			t = protocol.ResourceChangeTypeAdded
		case watch.Deleted:
			t = protocol.ResourceChangeTypeDeleted
		}
		items = append(items, protocol.ResourceChange{URI: files.URIOf(c.Path), Type: t})
	}
	wc.w.h.Publish(wc.uri, &protocol.ResourceWatchChangedAction{Changes: protocol.ResourceWatchChangedActionChanges{Items: items}})
}

// release stops the OS watch and removes the channel.
func (wc *watchChan) release() {
	wc.once.Do(func() {
		wc.w.mu.Lock()
		delete(wc.w.watches, wc.uri)
		fw := wc.fw
		wc.w.mu.Unlock()
		if fw != nil {
			fw.Close()
		}
		wc.w.h.CloseChannel(wc.uri)
		wc.w.log.Debug("resource watch released", "watch", wc.uri)
	})
}

// ValidateAction implements host.ChannelOwner: clients dispatch nothing
// on a watch.
func (wc *watchChan) ValidateAction(host.Client, protocol.SnapshotState, protocol.StateAction) string {
	return "a resource watch takes no client actions"
}

// ActionAccepted implements host.ChannelOwner.
func (wc *watchChan) ActionAccepted(host.Client, protocol.StateAction) {}

// Unsubscribed implements host.ChannelOwner: the last subscriber leaving
// (unsubscribe or disconnect) releases the watch.
func (wc *watchChan) Unsubscribed(_ host.Client, remaining int) {
	if remaining == 0 {
		// Not under the host's lock: rootLoop releases it.
		wc.w.mu.Lock()
		wc.w.toRelease = append(wc.w.toRelease, wc)
		wc.w.mu.Unlock()
		select {
		case wc.w.releaseSig <- struct{}{}:
		default:
		}
	}
}

// closeWatches releases every watch.
func (w *Workspace) closeWatches() {
	w.mu.Lock()
	ws := make([]*watchChan, 0, len(w.watches))
	for _, wc := range w.watches {
		ws = append(ws, wc)
	}
	w.mu.Unlock()
	for _, wc := range ws {
		wc.release()
	}
}
