package catalog

import (
	"context"
	"testing"
)

// TestNamesDifferingOnlyInCase: names resolve case-insensitively (Spark's
// identifiers are), and Resolve takes the first entry of the Tables map whose key matches,
// in Go's random map order. A catalog file with sales.orders and Sales.Orders naming two
// tables (YAML and TOML keys are case-sensitive) makes "VACUUM sales.orders" vacuum one or
// the other from run to run. Such a name is ambiguous: it must be refused (or the exact
// spelling preferred), never picked at random.
// Found by the first review, of the deletion paths.
func TestNamesDifferingOnlyInCase(t *testing.T) {
	c := &Catalog{Tables: map[string]string{
		"sales.orders": "/data/orders",
		"Sales.Orders": "/data/orders_archive",
		"SALES.ORDERS": "/data/orders_restored",
	}}
	seen := map[string]bool{}
	for range 200 {
		loc, err := c.Resolve(context.Background(), []string{"sales", "orders"})
		if err != nil {
			return // refused: the safe answer
		}
		seen[loc] = true
	}
	if len(seen) > 1 {
		t.Errorf("one name resolved to %d different tables over 200 runs: %v", len(seen), seen)
	}
}
