// Package weaviatetest starts real Weaviate servers for tests: one node,
// or a cluster of several on loopback, each in its own temp folder on free
// ports, and kills (SIGKILL, as kill -9) and restarts nodes for failure
// tests. The server binary is the pinned version that
// scripts/install-weaviate.sh builds into the user cache; tests skip with
// a message naming that script when it is absent.
//
//	node := weaviatetest.StartNode(t)        // skips without the binary
//	url := "weaviate://" + node.Addr() + "/Papers"
//	...
//	c := weaviatetest.StartCluster(t, 3)    // 3 nodes, one Raft cluster
//	c.Nodes[1].Kill()                        // kill -9
//	require.NoError(t, c.Nodes[1].Start(ctx)) // same folder and ports
//
// Everything is stopped and removed by t.Cleanup; the tail of a node's log
// is printed when the test failed.
//
// The nodes run with settings that make the failure tests fast:
// memtables flushed after 1 s idle (PERSISTENCE_MEMTABLES_FLUSH_IDLE_AFTER_SECONDS)
// and async replication every second (ASYNC_REPLICATION_FREQUENCY,
// ASYNC_REPLICATION_PROPAGATION_DELAY); telemetry and profiling are off.
// CITEFIND_WEAVIATE_LOG_LEVEL sets the nodes' LOG_LEVEL (warning).
package weaviatetest
