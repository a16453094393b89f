module example.com/x

go 1.26
