"""One class per area of the management API, each a thin typed layer over the transport."""
