package p

func longTest() {
	_ = 1
	_ = 2
	_ = 3
	_ = 4
	_ = 5
}
