package settings

import (
	"strings"

	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/workbench"
)

// visionField is the Settings checkbox "The model accepts images" for the
// model typed in the form: it shows the saved choice for that model, or
// what Tally's model table says of it, and follows the model field.
type visionField struct {
	check *widget.Check
	model string // the model the check shows
	// chosen holds the choices made in this form, by model, so typing
	// another model and back keeps them until Save.
	chosen map[string]bool
}

func newVisionField(saved workbench.Settings, model string) *visionField {
	v := &visionField{chosen: map[string]bool{}}
	v.check = widget.NewCheck("The model accepts images", func(on bool) {
		if v.model != "" {
			v.chosen[visionKey(v.model)] = on
		}
	})
	v.follow(saved, model)
	return v
}

// follow shows the choice for model.
func (v *visionField) follow(saved workbench.Settings, model string) {
	model = strings.TrimSpace(model)
	on, ok := v.chosen[visionKey(model)]
	if !ok {
		on = saved.VisionFor(model)
	}
	v.model = "" // setting the check is not a choice
	v.check.SetChecked(on)
	v.model = model
	if model == "" {
		v.check.Disable()
	} else {
		v.check.Enable()
	}
}

// item is the form's row.
func (v *visionField) item() *widget.FormItem {
	return &widget.FormItem{Text: "Images", Widget: v.check,
		HintText: "send pictures to this model: pasted, dropped or attached to the prompt, and image files read_file opens; on for the models Tally knows accept them"}
}

// apply saves the choices made in the form into s.
func (v *visionField) apply(s *workbench.Settings) {
	for model, on := range v.chosen {
		*s = s.SetVision(model, on)
	}
}

// visionKey is how a model's choice is keyed: its name, trimmed, in lower
// case (as the settings key it).
func visionKey(model string) string { return strings.ToLower(strings.TrimSpace(model)) }
