package p

type T struct{}

func (*T) six() {
	_ = 1
	_ = 2
	_ = 3
	_ = 4
}

func five() {
	_ = 1
	_ = 2
	_ = 3
}
