module github.com/warrenhq/warren/clients/go

go 1.23
