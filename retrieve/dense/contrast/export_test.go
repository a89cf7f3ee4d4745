package contrast

// GemmNT exports gemmNT to the black-box tests (measurement's exact scan).
var GemmNT = gemmNT
