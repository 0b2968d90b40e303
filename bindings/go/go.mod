module bulkscore.dev/bindings/go

go 1.19
